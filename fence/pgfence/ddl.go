package pgfence

import (
	"context"
	"fmt"
	"strings"
)

// The default table names, as WithRowsTable and WithMarksTable state them.
const (
	defaultRowsTable  = "pgfence_rows"
	defaultMarksTable = "pgfence_marks"
)

// DDL creates the two tables this package uses, under their default names.
// Put it in your own migrations (it is idempotent), or run CreateTables.
// For other names, use Store.DDL.
//
// pgfence_rows holds fenced rows: a value and the token of the last write
// accepted for it (0 for a row created outside this package). Update
// compares against fence_token.
//
// pgfence_marks holds one high-water mark per resource for Guard. Rows
// there are never deleted by this package: a lost mark lets a stale token
// in again.
const DDL = `CREATE TABLE IF NOT EXISTS "` + defaultRowsTable + `" (
	id          text   PRIMARY KEY,
	value       text   NOT NULL,
	fence_token bigint NOT NULL DEFAULT 0 CHECK (fence_token >= 0)
);
CREATE TABLE IF NOT EXISTS "` + defaultMarksTable + `" (
	resource text   PRIMARY KEY,
	token    bigint NOT NULL CHECK (token > 0)
);
`

// defaultNames are the quoted default names as they appear in DDL, which
// Store.DDL replaces: the text of the tables is written once, in DDL.
var defaultNames = []string{`"` + defaultRowsTable + `"`, `"` + defaultMarksTable + `"`}

// DDL returns the statements that create the Store's two tables under its
// configured names: DDL, with the names changed.
func (s *Store) DDL() string {
	// A Replacer does not rescan what it wrote, so a quoted name that
	// contains a default name is left as it is.
	return strings.NewReplacer(defaultNames[0], s.rows, defaultNames[1], s.marks).Replace(DDL)
}

// CreateTables runs the Store's DDL on db. It is idempotent. A schema named
// in WithRowsTable or WithMarksTable must already exist.
func (s *Store) CreateTables(ctx context.Context, db DB) error {
	if isNil(db) {
		return ErrNilDB
	}
	// No arguments: pgx sends it with the simple protocol, which accepts
	// several statements in one string.
	if _, err := db.Exec(ctx, s.DDL()); err != nil {
		return fmt.Errorf("pgfence: create tables: %w", err)
	}
	return nil
}
