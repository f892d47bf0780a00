package pgfence

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Table is a caller's own table fenced by a token column: each row has an
// id column (unique, typically the primary key) and a bigint column that
// holds the token of the last write accepted for it (0 or NULL for a row
// no fenced write has touched yet). Make one with Store.Table. A Table is
// immutable and safe for concurrent use.
type Table struct {
	name, id, token string    // quoted
	hint            string    // what ErrNoTable adds for this table
	obs             *observer // the Store's hook and logger
}

// Table returns a Table for the caller's table name (the name, or the
// schema and the name) with the given id and token columns. Every name is
// quoted with pgx.Identifier.Sanitize, so it is used exactly as given (case
// included) and cannot inject SQL. It fails with ErrInvalidTable for an
// empty, over-long (PostgreSQL allows 63 bytes) or NUL-holding name, or
// one column named twice. It makes no round trip.
func (s *Store) Table(name pgx.Identifier, idColumn, tokenColumn string) (*Table, error) {
	if len(name) < 1 || len(name) > 2 {
		return nil, fmt.Errorf("%w: table name %q: want [schema,] name", ErrInvalidTable, []string(name))
	}
	for _, p := range append(slices.Clone(name), idColumn, tokenColumn) {
		if err := checkIdent(p); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidTable, err)
		}
	}
	if idColumn == tokenColumn {
		return nil, fmt.Errorf("%w: id and token columns are both %q", ErrInvalidTable, idColumn)
	}
	quoted := name.Sanitize()
	return &Table{
		name:  quoted,
		id:    pgx.Identifier{idColumn}.Sanitize(),
		token: pgx.Identifier{tokenColumn}.Sanitize(),
		hint:  "create " + quoted + " with its id and token columns",
		obs:   &s.observer,
	}, nil
}

// checkIdent validates one part of a name before it is quoted.
func checkIdent(p string) error {
	// PostgreSQL silently truncates identifiers past 63 bytes, which would
	// make two long names collide.
	if p == "" || len(p) > 63 || strings.ContainsRune(p, 0) {
		return fmt.Errorf("name %q: want 1 to 63 bytes, no NUL", p)
	}
	return nil
}

// Update sets the columns of set on the row id if token is at least the
// row's token column, and records token there, in one statement:
//
//	UPDATE table SET token = $t, col = $v, … WHERE id = $id AND token <= $t
//
// Equal tokens are accepted. A refused write returns a *StaleError
// (matching ErrStale) carrying the row's token; a missing row returns
// ErrNotFound; both verdicts come from the same statement, which first
// locks the row, as Store.Update's do. set may not name the token column;
// an empty set only advances the token. Column names are quoted as Table's.
//
// db is a *pgxpool.Pool, *pgx.Conn or pgx.Tx; UpdateSQL takes a
// database/sql handle. Isolation levels and serialization failures behave
// as for Store.Update.
func (t *Table) Update(ctx context.Context, db DB, id any, token int64, set map[string]any) error {
	if isNil(db) {
		return ErrNilDB
	}
	return t.update(ctx, pgxDoor{db}, id, token, set)
}

// UpdateSQL is Update on a database/sql handle (*sql.DB, *sql.Conn or
// *sql.Tx), for a database opened with pgx's stdlib driver.
func (t *Table) UpdateSQL(ctx context.Context, db SQLDB, id any, token int64, set map[string]any) error {
	if isNil(db) {
		return ErrNilDB
	}
	return t.update(ctx, sqlDoor{db}, id, token, set)
}

func (t *Table) update(ctx context.Context, q querier, id any, token int64, set map[string]any) error {
	if t == nil {
		return fmt.Errorf("%w: nil Table", ErrInvalidTable)
	}
	if id == nil || id == "" {
		return fmt.Errorf("%w: empty id", ErrInvalidID)
	}
	if err := checkToken(token); err != nil {
		return err
	}
	cols := slices.Sorted(func(yield func(string) bool) {
		for c := range set {
			if !yield(c) {
				return
			}
		}
	})
	args := make([]any, 0, len(cols)+2)
	args = append(args, id, token)
	var assign strings.Builder
	for _, c := range cols {
		if err := checkIdent(c); err != nil {
			return fmt.Errorf("%w: column %w", ErrInvalidTable, err)
		}
		q := pgx.Identifier{c}.Sanitize()
		if q == t.token {
			return fmt.Errorf("%w: set names the token column %s, which the fence writes", ErrInvalidTable, q)
		}
		args = append(args, set[c])
		assign.WriteString(", " + q + " = $" + strconv.Itoa(len(args)))
	}
	return t.fencedUpdate(ctx, q, t.statement(assign.String()), fmt.Sprint(id), token, args)
}

// statement is the fenced UPDATE of t; assign holds ", col = $n" for each
// column set besides the token.
func (t *Table) statement(assign string) string {
	return `WITH cur AS (
	SELECT ` + t.id + ` AS fence_id, COALESCE(` + t.token + `, 0) AS fence_before
	FROM ` + t.name + ` WHERE ` + t.id + ` = $1 FOR UPDATE
), upd AS (
	UPDATE ` + t.name + ` AS r SET ` + t.token + ` = $2` + assign + `
	FROM cur WHERE r.` + t.id + ` = cur.fence_id AND COALESCE(r.` + t.token + `, 0) <= $2
	RETURNING 1
)
SELECT cur.fence_before, EXISTS (SELECT 1 FROM upd) FROM cur`
}

// fencedUpdate runs a Table statement and reads its verdict: the one
// implementation of a fenced row write, for Store.Update and Table.Update
// through either door.
func (t *Table) fencedUpdate(ctx context.Context, q querier, stmt, id string, token int64, args []any) error {
	var (
		before  int64
		applied bool
	)
	start := t.obs.start()
	err := q.queryRow(ctx, stmt, args...).Scan(&before, &applied)
	switch {
	case isNoRows(err):
		err = fmt.Errorf("%w: %q", ErrNotFound, id)
	case err != nil:
		err = wrapHint("update", id, t.hint, err)
	case !applied:
		err = &StaleError{ID: id, Token: token, Highest: before}
	}
	t.obs.observe(ctx, opUpdate, t.name, id, token, start, err)
	return err
}
