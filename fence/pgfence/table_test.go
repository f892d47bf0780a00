package pgfence_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/redis-primitives/go/fence/pgfence"
)

// A caller's table with odd names: every identifier is quoted, a name
// written to inject SQL is only a strange name, and the verdicts are those
// of Store.Update, through both doors.
func TestUpdateOfCallersTableQuotesNamesAndTellsStaleFromMissing(t *testing.T) {
	pool, store := newDB(t, 0)
	db := openSQL(t, pool)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE SCHEMA "Billing";
CREATE TABLE victim (x int);
CREATE TABLE "Billing"."Accounts ""EU""" ("Account ID" bigint PRIMARY KEY, "Balance" numeric, "x; DROP TABLE victim; --" text, "Fence" bigint);
INSERT INTO "Billing"."Accounts ""EU""" VALUES (7, 100, 'a', NULL);`); err != nil {
		t.Fatal(err)
	}
	table, err := store.Table(pgx.Identifier{"Billing", `Accounts "EU"`}, "Account ID", "Fence")
	if err != nil {
		t.Fatal(err)
	}
	set := func(balance int, note string) map[string]any {
		return map[string]any{"Balance": balance, "x; DROP TABLE victim; --": note}
	}
	// A NULL token counts as 0: the first fenced write is accepted.
	if err := table.Update(ctx, pool, 7, 5, set(90, "five")); err != nil {
		t.Fatal(err)
	}
	wantStale(t, table.Update(ctx, pool, 7, 4, set(0, "four")), 4, 5)
	wantStale(t, table.UpdateSQL(ctx, db, 7, 4, set(0, "four")), 4, 5)
	if err := table.UpdateSQL(ctx, db, 7, 6, set(80, "six")); err != nil {
		t.Fatal(err)
	}
	if err := table.Update(ctx, pool, 8, 9, set(1, "x")); !errors.Is(err, pgfence.ErrNotFound) || errors.Is(err, pgfence.ErrStale) {
		t.Fatalf("update of a missing row: %v, want ErrNotFound", err)
	}
	if err := table.UpdateSQL(ctx, db, 8, 9, set(1, "x")); !errors.Is(err, pgfence.ErrNotFound) {
		t.Fatalf("update of a missing row through database/sql: %v, want ErrNotFound", err)
	}
	// An empty set only advances the token.
	if err := table.Update(ctx, pool, 7, 7, nil); err != nil {
		t.Fatal(err)
	}
	var (
		balance int
		note    string
		tok     int64
	)
	if err := pool.QueryRow(ctx, `SELECT "Balance", "x; DROP TABLE victim; --", "Fence" FROM "Billing"."Accounts ""EU""" WHERE "Account ID" = 7`).Scan(&balance, &note, &tok); err != nil {
		t.Fatal(err)
	}
	if balance != 80 || note != "six" || tok != 7 {
		t.Fatalf("row = %d/%q/%d, want 80/six/7", balance, note, tok)
	}
	if n := count(t, pool, `SELECT count(*) FROM pg_tables WHERE tablename = 'victim'`); n != 1 {
		t.Fatal("the victim table is gone: a name was interpolated unquoted")
	}
}

func TestCallersTableBadNamesAreRefusedWithoutARoundTrip(t *testing.T) {
	store, err := pgfence.New()
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		table     pgx.Identifier
		id, token string
	}{
		"no table":          {nil, "id", "tok"},
		"three parts":       {pgx.Identifier{"a", "b", "c"}, "id", "tok"},
		"empty column":      {pgx.Identifier{"t"}, "", "tok"},
		"NUL":               {pgx.Identifier{"t"}, "id", "t\x00k"},
		"past 63 bytes":     {pgx.Identifier{strings.Repeat("t", 64)}, "id", "tok"},
		"one column twice":  {pgx.Identifier{"t"}, "id", "id"},
		"empty schema part": {pgx.Identifier{"", "t"}, "id", "tok"},
	} {
		if _, err := store.Table(tc.table, tc.id, tc.token); !errors.Is(err, pgfence.ErrInvalidTable) {
			t.Errorf("%s: %v, want ErrInvalidTable", name, err)
		}
	}
	table, err := store.Table(pgx.Identifier{"t"}, "id", "tok")
	if err != nil {
		t.Fatal(err)
	}
	// The calls go to a closed database: a round trip would surface as
	// another error.
	pool, _ := newDB(t, 0)
	closed := openSQL(t, pool)
	_ = closed.Close()
	ctx := context.Background()
	var nilTable *pgfence.Table
	var nilDB *sql.DB
	for name, tc := range map[string]struct {
		err, want error
	}{
		"set the token column": {table.UpdateSQL(ctx, closed, 1, 1, map[string]any{"tok": 3}), pgfence.ErrInvalidTable},
		"empty column in set":  {table.UpdateSQL(ctx, closed, 1, 1, map[string]any{"": 3}), pgfence.ErrInvalidTable},
		"token 0":              {table.UpdateSQL(ctx, closed, 1, 0, nil), pgfence.ErrInvalidToken},
		"empty id":             {table.UpdateSQL(ctx, closed, "", 1, nil), pgfence.ErrInvalidID},
		"nil id":               {table.UpdateSQL(ctx, closed, nil, 1, nil), pgfence.ErrInvalidID},
		"nil db":               {table.UpdateSQL(ctx, nilDB, 1, 1, nil), pgfence.ErrNilDB},
		"nil pgx db":           {table.Update(ctx, nil, 1, 1, nil), pgfence.ErrNilDB},
		"nil table":            {nilTable.UpdateSQL(ctx, closed, 1, 1, nil), pgfence.ErrInvalidTable},
		"nil sql tx":           {store.GuardSQL(ctx, nil, "r", 1), pgfence.ErrNilDB},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", name, tc.err, tc.want)
		}
	}
}

// A caller's table that does not exist: ErrNoTable, naming the table, not
// this package's CreateTables.
func TestMissingCallersTableIsErrNoTableNamingIt(t *testing.T) {
	pool, store := newDB(t, 0)
	table, err := store.Table(pgx.Identifier{"app", "ledger"}, "id", "token")
	if err != nil {
		t.Fatal(err)
	}
	err = table.Update(context.Background(), pool, "a", 1, map[string]any{"v": 1})
	if !errors.Is(err, pgfence.ErrNoTable) || !strings.Contains(err.Error(), `create "app"."ledger" with its id and token columns`) {
		t.Fatalf("update of a missing table: %v", err)
	}
}

// A caller that ignores GuardSQL's verdict still cannot commit: the guard
// rolled the transaction back.
func TestIgnoredGuardSQLRefusalCannotCommit(t *testing.T) {
	pool, store := newDB(t, 0)
	db := openSQL(t, pool)
	ctx := context.Background()
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return store.Guard(ctx, tx, "job", 9) }); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	wantStale(t, store.GuardSQL(ctx, tx, "job", 8), 8, 9)
	_, execErr := tx.ExecContext(ctx, `INSERT INTO pgfence_rows (id, value) VALUES ('ignored', 'x')`)
	commitErr := tx.Commit()
	if !errors.Is(execErr, sql.ErrTxDone) || !errors.Is(commitErr, sql.ErrTxDone) {
		t.Fatalf("after a refusal: exec %v, commit %v; want sql.ErrTxDone for both", execErr, commitErr)
	}
	if n := count(t, pool, `SELECT count(*) FROM pgfence_rows`); n != 0 {
		t.Fatalf("%d rows written by a refused transaction", n)
	}
	// The accepted path through database/sql commits.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.GuardSQL(ctx, tx, "job", 9); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO pgfence_rows (id, value) VALUES ('kept', 'x')`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if h, err := store.Highest(ctx, pool, "job"); err != nil || h != 9 {
		t.Fatalf("highest = %d, %v; want 9", h, err)
	}
}
