package pgfence_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/redis-primitives/go/fence/pgfence"
)

func wantStale(t *testing.T, err error, token, highest int64) {
	t.Helper()
	var se *pgfence.StaleError
	if !errors.Is(err, pgfence.ErrStale) || !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *StaleError matching ErrStale", err)
	}
	if se.Token != token || se.Highest != highest {
		t.Fatalf("StaleError{Token: %d, Highest: %d}, want {%d, %d}", se.Token, se.Highest, token, highest)
	}
}

func TestUpdateRefusesLowerTokenAndTellsItApartFromMissingRow(t *testing.T) {
	pool, store := newDB(t, 0)
	ctx := context.Background()
	if err := store.Update(ctx, pool, "acct", "v", 3); !errors.Is(err, pgfence.ErrNotFound) || errors.Is(err, pgfence.ErrStale) {
		t.Fatalf("update of a missing row: %v, want ErrNotFound (and not ErrStale)", err)
	}
	if err := store.Insert(ctx, pool, "acct", "v5", 5); err != nil {
		t.Fatal(err)
	}
	if err := store.Insert(ctx, pool, "acct", "again", 9); !errors.Is(err, pgfence.ErrExists) {
		t.Fatalf("second insert: %v, want ErrExists", err)
	}
	wantStale(t, store.Update(ctx, pool, "acct", "v4", 4), 4, 5)
	if v, tok := mustGet(t, store, pool, "acct"); v != "v5" || tok != 5 {
		t.Fatalf("row = %q/%d after a refused update, want v5/5", v, tok)
	}
	if err := store.Update(ctx, pool, "acct", "v7", 7); err != nil {
		t.Fatal(err)
	}
	if v, tok := mustGet(t, store, pool, "acct"); v != "v7" || tok != 7 {
		t.Fatalf("row = %q/%d, want v7/7", v, tok)
	}
	if _, _, err := store.Get(ctx, pool, "nope"); !errors.Is(err, pgfence.ErrNotFound) {
		t.Fatalf("get of a missing row: %v", err)
	}
}

func TestCurrentHolderRepeatedWritesAreAllAccepted(t *testing.T) {
	pool, store := newDB(t, 0)
	ctx := context.Background()
	if err := store.Insert(ctx, pool, "acct", "v0", 4); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		v := fmt.Sprintf("v%d", i)
		if err := store.Update(ctx, pool, "acct", v, 4); err != nil {
			t.Fatalf("update %d with the current token: %v", i, err)
		}
		if got, _ := mustGet(t, store, pool, "acct"); got != v {
			t.Fatalf("row = %q, want %q", got, v)
		}
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if err := store.Guard(ctx, tx, "job", 4); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO pgfence_rows (id, value) VALUES ($1, 'x')`, fmt.Sprintf("job-%d", i))
			return err
		})
		if err != nil {
			t.Fatalf("guarded transaction %d with the current token: %v", i, err)
		}
	}
	if n := count(t, pool, `SELECT count(*) FROM pgfence_rows WHERE id LIKE 'job-%'`); n != 10 {
		t.Fatalf("%d guarded transactions committed, want 10", n)
	}
	if h, err := store.Highest(ctx, pool, "job"); err != nil || h != 4 {
		t.Fatalf("highest = %d, %v; want 4", h, err)
	}
}

func TestStaleWriterThatGetsThereFirstIsAcceptedThenFencedOutForGood(t *testing.T) {
	pool, store := newDB(t, 0)
	ctx := context.Background()
	if err := store.Insert(ctx, pool, "acct", "seed", 0+1); err != nil {
		t.Fatal(err)
	}
	// Row: stale holder 1 writes before fresh holder 2 has: accepted, the
	// documented limit. After 2 writes, 1 is refused for good.
	if err := store.Update(ctx, pool, "acct", "stale", 1); err != nil {
		t.Fatalf("a stale writer arriving first was refused (%v): fencing only orders writes", err)
	}
	if err := store.Update(ctx, pool, "acct", "fresh", 2); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		wantStale(t, store.Update(ctx, pool, "acct", "stale again", 1), 1, 2)
	}
	if v, _ := mustGet(t, store, pool, "acct"); v != "fresh" {
		t.Fatalf("row = %q, want fresh", v)
	}

	// Guard: the same, for a whole transaction.
	guarded := func(token int64) error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if err := store.Guard(ctx, tx, "job", token); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO pgfence_rows (id, value, fence_token) VALUES (gen_random_uuid()::text, 'g', $1)`, token)
			return err
		})
	}
	if err := guarded(1); err != nil {
		t.Fatalf("stale guard arriving first: %v, want accepted", err)
	}
	if err := guarded(2); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		wantStale(t, guarded(1), 1, 2)
	}
	if n := count(t, pool, `SELECT count(*) FROM pgfence_rows WHERE value = 'g' AND fence_token = 1`); n != 1 {
		t.Fatalf("%d guarded writes with token 1 landed, want only the one made before token 2", n)
	}
}

// A caller that ignores the guard's verdict still cannot commit: the guard
// rolled the transaction back.
func TestIgnoredGuardRefusalCannotCommit(t *testing.T) {
	pool, store := newDB(t, 0)
	ctx := context.Background()
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return store.Guard(ctx, tx, "job", 9) }); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	wantStale(t, store.Guard(ctx, tx, "job", 8), 8, 9)
	_, execErr := tx.Exec(ctx, `INSERT INTO pgfence_rows (id, value) VALUES ('ignored', 'x')`)
	commitErr := tx.Commit(ctx)
	if !errors.Is(execErr, pgx.ErrTxClosed) || !errors.Is(commitErr, pgx.ErrTxClosed) {
		t.Fatalf("after a refusal: exec %v, commit %v; want pgx.ErrTxClosed for both", execErr, commitErr)
	}
	if n := count(t, pool, `SELECT count(*) FROM pgfence_rows`); n != 0 {
		t.Fatalf("%d rows written by a refused transaction", n)
	}
}

// The same calls run on a pool, a single connection and a transaction.
func TestUpdateWorksOnPoolConnAndTx(t *testing.T) {
	pool, store := newDB(t, 0)
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	var c *pgx.Conn = conn.Conn()
	if err := store.Insert(ctx, pool, "acct", "v1", 1); err != nil {
		t.Fatal(err)
	}
	if err := store.Update(ctx, c, "acct", "v2", 2); err != nil {
		t.Fatalf("on *pgx.Conn: %v", err)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Update(ctx, tx, "acct", "v3", 3); err != nil {
		t.Fatalf("in pgx.Tx: %v", err)
	}
	wantStale(t, store.Update(ctx, tx, "acct", "v1 again", 1), 1, 3)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	// The rolled-back update left the row at token 2.
	if v, tok := mustGet(t, store, pool, "acct"); v != "v2" || tok != 2 {
		t.Fatalf("row = %q/%d, want v2/2", v, tok)
	}
}

func TestCanceledContextIsReported(t *testing.T) {
	pool, store := newDB(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := store.Update(ctx, pool, "acct", "v", 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("update with a canceled context: %v, want context.Canceled", err)
	}
	if _, err := store.Highest(ctx, pool, "job"); !errors.Is(err, context.Canceled) {
		t.Fatalf("highest with a canceled context: %v", err)
	}
}
