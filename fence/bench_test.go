package fence_test

import (
	"context"
	"testing"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// What the fence costs over a plain SET on the same server and connection.
func BenchmarkSet(b *testing.B) {
	s := redistest.Start(b)
	c := s.Client(b)
	ctx := context.Background()
	store, err := fence.New(goredisadapter.New(c))
	if err != nil {
		b.Fatal(err)
	}
	key := s.Prefix() + "{bench}"
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if err := c.Set(ctx, key, "v", 0).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fenced", func(b *testing.B) {
		for b.Loop() {
			if err := store.Set(ctx, 1, key, "v"); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The same write with a hook that counts: the cost of observing.
	var decisions int
	hooked, err := fence.New(goredisadapter.New(c), fence.WithHook(func(context.Context, fence.Event) { decisions++ }))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("fenced-hook", func(b *testing.B) {
		for b.Loop() {
			if err := hooked.Set(ctx, 1, key, "v"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("eval", func(b *testing.B) {
		for b.Loop() {
			if _, err := store.Eval(ctx, 1, "redis.call('SET', KEYS[2], ARGV[2])", []string{key}, "v"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("refused", func(b *testing.B) {
		if err := store.Set(ctx, 1<<40, key, "v"); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := store.Set(ctx, 1, key, "v"); err == nil {
				b.Fatal("accepted")
			}
		}
	})
}
