package pgfence_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/redis-primitives/go/fence/pgfence"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/pgtest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// newDB returns a pool on an empty database of the test's own, with the
// default tables created, and a default Store. maxConns 0 keeps pgx's
// default pool size.
func newDB(t *testing.T, maxConns int32) (*pgxpool.Pool, *pgfence.Store) {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	store, err := pgfence.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateTables(ctx, pool); err != nil {
		t.Fatal(err)
	}
	return pool, store
}

func count(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func mustGet(t *testing.T, store *pgfence.Store, pool *pgxpool.Pool, id string) (string, int64) {
	t.Helper()
	v, tok, err := store.Get(context.Background(), pool, id)
	if err != nil {
		t.Fatalf("get %q: %v", id, err)
	}
	return v, tok
}
