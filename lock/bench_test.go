package lock_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/naivelock"
	"github.com/redis-primitives/go/lock"
)

// One acquire and one release: two script round trips.
func BenchmarkAcquireRelease(b *testing.B) {
	s := redistest.Start(b)
	l := newLocker(b, s)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		lease, err := l.Acquire(ctx, "bench", time.Second)
		if err != nil {
			b.Fatal(err)
		}
		if ok, err := l.Release(ctx, lease); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

// The same with counter-only tokens (INCR), for the cost of the default's
// TIME and the counter's SET GET.
func BenchmarkAcquireReleaseCounterTokens(b *testing.B) {
	s := redistest.Start(b)
	l := newLocker(b, s, lock.WithCounterTokens())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		lease, err := l.Acquire(ctx, "bench", time.Second)
		if err != nil {
			b.Fatal(err)
		}
		if ok, err := l.Release(ctx, lease); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

// Many goroutines, each on a name of its own, sharing one client.
func BenchmarkAcquireReleaseParallel(b *testing.B) {
	s := redistest.Start(b)
	l := newLocker(b, s)
	ctx := context.Background()
	var ids atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		name := "bench-" + strconv.FormatInt(ids.Add(1), 10)
		for pb.Next() {
			lease, err := l.Acquire(ctx, name, time.Second)
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := l.Release(ctx, lease); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// The refusal path: one round trip that returns the holder.
func BenchmarkAcquireHeld(b *testing.B) {
	s := redistest.Start(b)
	l := newLocker(b, s)
	ctx := context.Background()
	mustAcquire(b, l, "bench", time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Acquire(ctx, "bench", time.Second); !errors.Is(err, lock.ErrHeld) {
			b.Fatal(err)
		}
	}
}

// The broken SET NX PX + DEL, for the cost of doing it right.
func BenchmarkNaiveAcquireRelease(b *testing.B) {
	s := redistest.Start(b)
	n := naivelock.New(s.Client(b, func(o *redis.Options) { o.ContextTimeoutEnabled = true }), s.Prefix())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := n.Acquire(ctx, "bench", time.Second); err != nil || !ok {
			b.Fatal(ok, err)
		}
		if err := n.Release(ctx, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAcquireReleaseBatched: 50 goroutines on names of their own,
// unbatched and WithBatching(64), on one client.
func BenchmarkAcquireReleaseBatched(b *testing.B) {
	for _, size := range []int{0, 64} {
		b.Run("batch="+strconv.Itoa(size), func(b *testing.B) {
			s := redistest.Start(b)
			c := client(b, s, func(o *redis.Options) { o.PoolSize = 60 })
			var opts []lock.Option
			if size > 0 {
				opts = append(opts, lock.WithBatching(size))
			}
			l := newLockerOn(b, s, c, opts...)
			ctx := context.Background()
			var ids atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(max(1, 50/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				name := "bench-" + strconv.FormatInt(ids.Add(1), 10)
				for pb.Next() {
					lease, err := l.Acquire(ctx, name, 10*time.Second)
					if err != nil {
						b.Error(err)
						return
					}
					if _, err := l.Release(ctx, lease); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
