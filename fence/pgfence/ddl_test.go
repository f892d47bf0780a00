package pgfence_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis-primitives/go/fence/pgfence"
)

func TestDDLConstantIsTheDefaultStoresDDL(t *testing.T) {
	store, err := pgfence.New()
	if err != nil {
		t.Fatal(err)
	}
	if store.DDL() != pgfence.DDL {
		t.Fatalf("DDL constant and default Store.DDL differ:\n%s\n---\n%s", pgfence.DDL, store.DDL())
	}
	// A configured name that contains a default name is not rewritten again.
	odd, err := pgfence.New(pgfence.WithRowsTable(`"pgfence_marks"`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`CREATE TABLE IF NOT EXISTS """pgfence_marks""" (`, `CREATE TABLE IF NOT EXISTS "pgfence_marks" (`} {
		if !strings.Contains(odd.DDL(), want) {
			t.Fatalf("DDL lacks %s:\n%s", want, odd.DDL())
		}
	}
}

// Table names are quoted: odd names work as given, and a name written to
// inject SQL is only a strange table name.
func TestConfiguredTableNamesAreQuotedNotInjected(t *testing.T) {
	pool, _ := newDB(t, 0)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE SCHEMA "App"; CREATE TABLE victim (x int)`); err != nil {
		t.Fatal(err)
	}
	store, err := pgfence.New(
		pgfence.WithRowsTable("App", `Fenced "Rows"`),
		pgfence.WithMarksTable(`marks"; DROP TABLE victim; --`),
	)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // idempotent
		if err := store.CreateTables(ctx, pool); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Insert(ctx, pool, "a", "v1", 1); err != nil {
		t.Fatal(err)
	}
	if err := store.Update(ctx, pool, "a", "v2", 2); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, `SELECT count(*) FROM "App"."Fenced ""Rows"""`); n != 1 {
		t.Fatalf("%d rows in the configured table, want 1", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM pg_tables WHERE tablename IN ('victim', 'marks"; DROP TABLE victim; --')`); n != 2 {
		t.Fatalf("%d of the victim and the oddly named marks table exist, want both", n)
	}
	// The default tables stay empty: the Store used its own names.
	if n := count(t, pool, `SELECT count(*) FROM pgfence_rows`); n != 0 {
		t.Fatalf("default table has %d rows", n)
	}
}

func TestBadOptionsAreRejected(t *testing.T) {
	cases := map[string]pgfence.Option{
		"no parts":        pgfence.WithRowsTable(),
		"three parts":     pgfence.WithRowsTable("a", "b", "c"),
		"empty part":      pgfence.WithMarksTable("app", ""),
		"NUL":             pgfence.WithMarksTable("a\x00b"),
		"past 63 bytes":   pgfence.WithRowsTable("t234567890123456789012345678901234567890123456789012345678901234"),
		"same two tables": pgfence.WithMarksTable("pgfence_rows"),
		"nil":             nil,
	}
	for name, opt := range cases {
		if _, err := pgfence.New(opt); !errors.Is(err, pgfence.ErrInvalidOption) {
			t.Errorf("%s: %v, want ErrInvalidOption", name, err)
		}
	}
}
