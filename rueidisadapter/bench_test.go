package rueidisadapter_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/rueidisadapter"
)

// An Acquire and a Release of a lock through the adapter, on a real
// server: what a lock costs on rueidis (go test -bench . -benchmem). With
// a deadline, acquire.lua, which may be sent again, is marked retryable
// and pinned (a few allocations more); without one, neither is.
func BenchmarkLockAcquireRelease(b *testing.B) {
	s := redistest.Start(b)
	l, err := lock.New(rueidisadapter.New(newRueidis(b, rueidis.ClientOption{InitAddress: addrs(s)})), lock.WithPrefix(s.Prefix()))
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Minute)
		}},
		{"no-deadline", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx, cancel := bc.ctx()
			defer cancel()
			b.ReportAllocs()
			for b.Loop() {
				lease, err := l.Acquire(ctx, "job", time.Second)
				if err != nil {
					b.Fatal(err)
				}
				if ok, err := l.Release(ctx, lease); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}
