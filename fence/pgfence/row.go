package pgfence

import (
	"context"
	"fmt"
)

// Insert creates the row id with value and token. It fails with ErrExists
// if the row already exists, and changes nothing then. Creating a row is
// not fenced against a newer holder that has not created it yet: that is
// the same limit as a stale writer arriving first.
func (s *Store) Insert(ctx context.Context, db DB, id, value string, token int64) error {
	if err := check(db, id, token); err != nil {
		return err
	}
	tag, err := db.Exec(ctx, fmt.Sprintf(
		`INSERT INTO %s (id, value, fence_token) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`, s.rows),
		id, value, token)
	if err != nil {
		return wrap("insert", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %q", ErrExists, id)
	}
	return nil
}

// Update sets the value of row id if token is at least the row's
// fence_token, and records token, in one statement:
//
//	UPDATE rows SET value = $v, fence_token = $t WHERE id = $id AND fence_token <= $t
//
// Equal tokens are accepted. A refused write returns a *StaleError
// (matching ErrStale) carrying the row's token; a missing row returns
// ErrNotFound. Both verdicts come from the same statement, which first locks
// the row (SELECT … FOR UPDATE in a CTE), so "refused" and "no such row"
// cannot be confused by a concurrent insert, update or delete.
//
// Under READ COMMITTED a concurrent writer of the same row is waited for and
// then compared against. Under REPEATABLE READ and SERIALIZABLE the same
// overlap makes PostgreSQL abort the transaction: Update then returns an
// error matching ErrSerialization, and the caller retries the whole
// transaction.
func (s *Store) Update(ctx context.Context, db DB, id, value string, token int64) error {
	if err := check(db, id, token); err != nil {
		return err
	}
	return s.rowsTable.fencedUpdate(ctx, pgxDoor{db}, s.updateSQL, id, token, []any{id, token, value})
}

// Get returns the value of row id and the token of the last write accepted
// for it, or ErrNotFound.
func (s *Store) Get(ctx context.Context, db DB, id string) (value string, token int64, err error) {
	if isNil(db) {
		return "", 0, ErrNilDB
	}
	if id == "" {
		return "", 0, fmt.Errorf("%w: empty id", ErrInvalidID)
	}
	err = db.QueryRow(ctx, fmt.Sprintf(`SELECT value, fence_token FROM %s WHERE id = $1`, s.rows), id).Scan(&value, &token)
	if isNoRows(err) {
		return "", 0, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	if err != nil {
		return "", 0, wrap("get", id, err)
	}
	return value, token, nil
}
