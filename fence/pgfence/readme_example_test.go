package pgfence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/redis-primitives/go/fence/pgfence"
)

// charge is the README's pgfence quickstart, word for word
// (examples/snippets_test.go checks it).
func charge(ctx context.Context, pool *pgxpool.Pool, store *pgfence.Store, token int64) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) // a no-op after Commit; returns the connection on every other path
	if err := store.Guard(ctx, tx, "account-42", token); err != nil {
		return err // *pgfence.StaleError: fenced out, and tx is already rolled back
	}
	// ... any number of statements in tx, all fenced together ...
	return tx.Commit(ctx)
}

func TestTheReadmesPgfenceSnippetReturnsAStaleHoldersRefusalAndReturnsTheConnection(t *testing.T) {
	pool, store := newDB(t, 1) // one connection: a transaction left open would block the next charge
	ctx := context.Background()
	if err := charge(ctx, pool, store, 2); err != nil {
		t.Fatalf("the newer holder's charge: %v", err)
	}
	err := charge(ctx, pool, store, 1)
	var stale *pgfence.StaleError
	if !errors.As(err, &stale) {
		t.Fatalf("the older holder's charge returned %v, want a *pgfence.StaleError", err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := charge(waitCtx, pool, store, 3); err != nil {
		t.Fatalf("a charge after the refusal: %v (the refused one kept the only connection?)", err)
	}
}
