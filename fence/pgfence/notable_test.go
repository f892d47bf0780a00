package pgfence_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/redis-primitives/go/fence/pgfence"
	"github.com/redis-primitives/go/internal/redistest/pgtest"
)

// On a database where the tables were never created, every call says so
// and how to fix it, instead of a bare "SQLSTATE 42P01"; after
// CreateTables the same calls work.
func TestMissingTablesErrorSaysHowToCreateThem(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	store, err := pgfence.New()
	if err != nil {
		t.Fatal(err)
	}
	guard := func() error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return store.Guard(ctx, tx, "job", 1) })
	}
	_, _, getErr := store.Get(ctx, pool, "a")
	_, highErr := store.Highest(ctx, pool, "job")
	for name, err := range map[string]error{
		"insert":  store.Insert(ctx, pool, "a", "v", 1),
		"update":  store.Update(ctx, pool, "a", "v", 1),
		"get":     getErr,
		"highest": highErr,
		"guard":   guard(),
	} {
		if !errors.Is(err, pgfence.ErrNoTable) || !strings.Contains(err.Error(), "CreateTables") ||
			!strings.Contains(err.Error(), "pgfence.DDL") || !strings.Contains(err.Error(), "42P01") {
			t.Errorf("%s on a database without the tables: %v; want ErrNoTable naming CreateTables and DDL", name, err)
		}
	}
	if err := store.CreateTables(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := store.Insert(ctx, pool, "a", "v", 1); err != nil {
		t.Fatal(err)
	}
	if err := guard(); err != nil {
		t.Fatal(err)
	}
}
