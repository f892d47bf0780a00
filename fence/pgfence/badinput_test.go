package pgfence_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/redis-primitives/go/fence/pgfence"
)

// Bad input fails with a typed error and no round trip. The calls go to a
// closed pool, so any attempt to reach the database would surface as a
// different error; the live database is then checked to be untouched.
func TestBadInputGetsTypedErrorAndTouchesNothing(t *testing.T) {
	live, store := newDB(t, 0)
	ctx := context.Background()
	closed, err := pgxpool.New(ctx, live.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	tx, err := live.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)

	var (
		nilPool *pgxpool.Pool
		nilConn *pgx.Conn
		nilTx   pgx.Tx
	)
	_, _, getErr := store.Get(ctx, nilConn, "a")
	_, highErr := store.Highest(ctx, nilPool, "a")
	_, emptyHighErr := store.Highest(ctx, closed, "")
	_, _, emptyGetErr := store.Get(ctx, closed, "")
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"update nil pool", store.Update(ctx, nilPool, "a", "v", 1), pgfence.ErrNilDB},
		{"update nil conn", store.Update(ctx, nilConn, "a", "v", 1), pgfence.ErrNilDB},
		{"update nil db", store.Update(ctx, nil, "a", "v", 1), pgfence.ErrNilDB},
		{"insert nil pool", store.Insert(ctx, nilPool, "a", "v", 1), pgfence.ErrNilDB},
		{"guard nil tx", store.Guard(ctx, nilTx, "r", 1), pgfence.ErrNilDB},
		{"get nil conn", getErr, pgfence.ErrNilDB},
		{"highest nil pool", highErr, pgfence.ErrNilDB},
		{"create tables nil", store.CreateTables(ctx, nilPool), pgfence.ErrNilDB},
		{"update empty id", store.Update(ctx, closed, "", "v", 1), pgfence.ErrInvalidID},
		{"insert empty id", store.Insert(ctx, closed, "", "v", 1), pgfence.ErrInvalidID},
		{"get empty id", emptyGetErr, pgfence.ErrInvalidID},
		{"highest empty resource", emptyHighErr, pgfence.ErrInvalidID},
		{"guard empty resource", store.Guard(ctx, tx, "", 1), pgfence.ErrInvalidID},
		{"update token 0", store.Update(ctx, closed, "a", "v", 0), pgfence.ErrInvalidToken},
		{"update negative token", store.Update(ctx, closed, "a", "v", -5), pgfence.ErrInvalidToken},
		{"insert token 0", store.Insert(ctx, closed, "a", "v", 0), pgfence.ErrInvalidToken},
		{"guard token 0", store.Guard(ctx, tx, "r", 0), pgfence.ErrInvalidToken},
		{"guard negative token", store.Guard(ctx, tx, "r", -1), pgfence.ErrInvalidToken},
	}
	for _, tc := range cases {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("the transaction the bad guards were given is no longer usable: %v", err)
	}
	if n := count(t, live, `SELECT (SELECT count(*) FROM pgfence_rows) + (SELECT count(*) FROM pgfence_marks)`); n != 0 {
		t.Fatalf("bad input wrote %d rows", n)
	}
}
