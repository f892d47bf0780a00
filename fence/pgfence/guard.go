package pgfence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Guard fences a whole transaction. Call it first in the transaction, with
// the name of the resource the transaction writes (typically the lock's
// name) and the holder's token. It advances the resource's high-water mark
// to token, in one statement,
//
//	INSERT INTO marks … ON CONFLICT (resource) DO UPDATE SET token = $t WHERE marks.token <= $t
//
// or, if a higher token has been accepted, reports the caller fenced out
// with a *StaleError (matching ErrStale). Every other write of the
// transaction then commits only if the guard passed, atomically with it:
// whatever the transaction writes is fenced, in any table, in any number of
// statements.
//
// On refusal Guard rolls tx back before returning, so a caller that
// ignores the error cannot commit: its next statement and its Commit fail
// with pgx.ErrTxClosed. Pass the outermost transaction, not a savepoint
// (pgx.Tx.Begin), whose rollback would leave the outer writes in place.
//
// While tx is open it holds the lock of the resource's mark row, so the
// guarded transactions of one resource run one after another. Calling
// Guard first matters: it takes that lock before any row lock, which avoids
// deadlocks, and it refuses before any work is done.
//
// Under REPEATABLE READ and SERIALIZABLE, a guard that overlaps another
// transaction of the same resource aborts with an error matching
// ErrSerialization (see IsSerializationFailure): not a verdict; roll back
// and retry the whole transaction. Under READ COMMITTED the guard waits for
// the other transaction instead.
func (s *Store) Guard(ctx context.Context, tx pgx.Tx, resource string, token int64) error {
	if err := check(tx, resource, token); err != nil {
		return err
	}
	return s.guard(ctx, pgxDoor{tx}, func() { _ = tx.Rollback(ctx) }, resource, token)
}

// GuardSQL is Guard for a database/sql transaction, on a database opened
// with pgx's stdlib driver (see SQLDB). On refusal it rolls tx back, so a
// caller that ignores the error cannot commit: its next statement and its
// Commit fail with sql.ErrTxDone.
func (s *Store) GuardSQL(ctx context.Context, tx *sql.Tx, resource string, token int64) error {
	if err := check(tx, resource, token); err != nil {
		return err
	}
	return s.guard(ctx, sqlDoor{tx}, func() { _ = tx.Rollback() }, resource, token)
}

// guard is the one implementation behind Guard and GuardSQL; rollback
// ends the caller's transaction on refusal.
func (s *Store) guard(ctx context.Context, tx querier, rollback func(), resource string, token int64) error {
	start := s.observer.start()
	err := s.guardOnce(ctx, tx, rollback, resource, token)
	s.observe(ctx, opGuard, s.marks, resource, token, start, err)
	return err
}

func (s *Store) guardOnce(ctx context.Context, tx querier, rollback func(), resource string, token int64) error {
	var stored int64
	err := tx.queryRow(ctx, fmt.Sprintf(`INSERT INTO %[1]s AS m (resource, token) VALUES ($1, $2)
ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token WHERE m.token <= EXCLUDED.token
RETURNING m.token`, s.marks), resource, token).Scan(&stored)
	if err == nil {
		return nil
	}
	if !isNoRows(err) {
		return wrap("guard", resource, err)
	}
	// Refused. ON CONFLICT DO UPDATE locked the mark even though its WHERE
	// was false, so this read sees the very token that refused us: under
	// READ COMMITTED a fresh snapshot of a row no one else can change now;
	// under the stricter levels the refusal could only be decided on a row
	// our snapshot already sees.
	var highest int64
	err = tx.queryRow(ctx, fmt.Sprintf(`SELECT token FROM %s WHERE resource = $1`, s.marks), resource).Scan(&highest)
	rollback()
	if err != nil {
		stale := &StaleError{ID: resource, Token: token}
		return fmt.Errorf("pgfence: guard %q: refused, and reading the highest token failed: %w", resource, errors.Join(stale, err))
	}
	return &StaleError{ID: resource, Token: token, Highest: highest}
}

// Highest returns the highest token Guard has accepted for resource, or 0
// if none has been.
func (s *Store) Highest(ctx context.Context, db DB, resource string) (int64, error) {
	if isNil(db) {
		return 0, ErrNilDB
	}
	if resource == "" {
		return 0, fmt.Errorf("%w: empty resource", ErrInvalidID)
	}
	var n int64
	err := db.QueryRow(ctx, fmt.Sprintf(`SELECT token FROM %s WHERE resource = $1`, s.marks), resource).Scan(&n)
	if isNoRows(err) {
		return 0, nil
	}
	if err != nil {
		return 0, wrap("highest", resource, err)
	}
	return n, nil
}
