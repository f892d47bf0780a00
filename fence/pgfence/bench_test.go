package pgfence_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/redis-primitives/go/fence/pgfence"
	"github.com/redis-primitives/go/internal/redistest/pgtest"
)

// What the fence costs over a plain UPDATE, and a guarded transaction over
// the same transaction unguarded.
func BenchmarkUpdate(b *testing.B) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	store, _ := pgfence.New()
	if err := store.CreateTables(ctx, pool); err != nil {
		b.Fatal(err)
	}
	if err := store.Insert(ctx, pool, "acct", "v", 1); err != nil {
		b.Fatal(err)
	}
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if _, err := pool.Exec(ctx, `UPDATE pgfence_rows SET value = $1 WHERE id = 'acct'`, "v"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fenced", func(b *testing.B) {
		for b.Loop() {
			if err := store.Update(ctx, pool, "acct", "v", 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The same write with a hook that counts: the cost of observing.
	var decisions int
	hooked, err := pgfence.New(pgfence.WithHook(func(context.Context, pgfence.Event) { decisions++ }))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("fenced-hook", func(b *testing.B) {
		for b.Loop() {
			if err := hooked.Update(ctx, pool, "acct", "v", 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	tx := func(guard bool) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
					if guard {
						if err := store.Guard(ctx, tx, "acct", 1); err != nil {
							return err
						}
					}
					_, err := tx.Exec(ctx, `UPDATE pgfence_rows SET value = $1 WHERE id = 'acct'`, "v")
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("tx-plain", tx(false))
	b.Run("tx-guarded", tx(true))
}
