package pgfence_test

import (
	"context"

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

var _ = charge
