package pgfence

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Store knows the names of the two tables this package uses (see DDL) and
// runs the fenced statements against them. It holds no connection: each
// call takes the DB to run on. It is immutable and safe for concurrent use.
type Store struct {
	config
	rowsTable *Table // the rows as a Table, so Update is Table's fenced update
	updateSQL string // Update's statement, built once by New
}

// config holds what the options set.
type config struct {
	rows, marks string // quoted, possibly schema-qualified
	observer
}

// Option changes a Store's defaults. New applies the options in order and
// fails on the first that returns an error.
type Option func(*config) error

// WithRowsTable names the table of fenced rows (default "pgfence_rows").
// Give the name, or the schema and the name; each part is quoted, so it is
// used exactly as given (case included) and cannot inject SQL.
func WithRowsTable(parts ...string) Option {
	return func(c *config) (err error) {
		c.rows, err = quote(parts)
		return err
	}
}

// WithMarksTable names the table of high-water marks used by Guard
// (default "pgfence_marks"), as WithRowsTable.
func WithMarksTable(parts ...string) Option {
	return func(c *config) (err error) {
		c.marks, err = quote(parts)
		return err
	}
}

// New returns a Store for the default table names or those set by options.
// It makes no round trip; create the tables with CreateTables or put DDL in
// your migrations.
func New(opts ...Option) (*Store, error) {
	s := &Store{config: config{rows: pgx.Identifier{defaultRowsTable}.Sanitize(), marks: pgx.Identifier{defaultMarksTable}.Sanitize()}}
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: nil option", ErrInvalidOption)
		}
		if err := opt(&s.config); err != nil {
			return nil, err
		}
	}
	if s.rows == s.marks {
		return nil, fmt.Errorf("%w: rows and marks need two tables, both are %s", ErrInvalidOption, s.rows)
	}
	// Store.Update is the fenced update of a Table: the Store's rows, with
	// the value column set.
	s.rowsTable = &Table{name: s.rows, id: `"id"`, token: `"fence_token"`, hint: noTableHint, obs: &s.observer}
	s.updateSQL = s.rowsTable.statement(`, "value" = $3`)
	return s, nil
}

// quote validates a table name of one or two parts and quotes it.
func quote(parts []string) (string, error) {
	if len(parts) < 1 || len(parts) > 2 {
		return "", fmt.Errorf("%w: table name %q: want [schema,] name", ErrInvalidOption, parts)
	}
	for _, p := range parts {
		// PostgreSQL silently truncates identifiers past 63 bytes, which
		// would make two long names collide.
		if p == "" || len(p) > 63 || strings.ContainsRune(p, 0) {
			return "", fmt.Errorf("%w: table name part %q: want 1 to 63 bytes, no NUL", ErrInvalidOption, p)
		}
	}
	return pgx.Identifier(parts).Sanitize(), nil
}

func check(db any, id string, token int64) error {
	if isNil(db) {
		return ErrNilDB
	}
	if id == "" {
		return fmt.Errorf("%w: empty id", ErrInvalidID)
	}
	return checkToken(token)
}

func checkToken(token int64) error {
	if token < 1 {
		return fmt.Errorf("%w: %d (want ≥ 1)", ErrInvalidToken, token)
	}
	return nil
}
