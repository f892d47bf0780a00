package ratelimit_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// The counter and GCRA limits are large enough that every call is admitted
// and writes, the costlier path; the log's 1000/s keeps its sorted set
// bounded, so on the hot key most calls are rejected (after a trim), as on a
// real hot key.
func benchRules() []struct {
	name string
	rule ratelimit.Rule
} {
	return []struct {
		name string
		rule ratelimit.Rule
	}{
		{"log", ratelimit.SlidingLog(1000, time.Second)},
		{"counter", ratelimit.SlidingCounter(1_000_000, time.Second)},
		{"gcra", ratelimit.GCRA(1_000_000, time.Second, 1000)},
		{"policy3", ratelimit.Policy{ratelimit.SlidingLog(1000, time.Second), ratelimit.SlidingCounter(1_000_000, time.Minute), ratelimit.GCRA(1_000_000, time.Second, 1000)}},
	}
}

func BenchmarkAllow(b *testing.B) {
	s := redistest.Start(b)
	c := s.Client(b, func(o *redis.Options) { o.PoolSize = 100 })
	l, err := ratelimit.New(goredisadapter.New(c), ratelimit.WithPrefix(s.Prefix()+"rl:"))
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
	}
	for _, r := range benchRules() {
		for _, shape := range []string{"hot-key", "many-keys"} {
			b.Run(r.name+"/"+shape, func(b *testing.B) {
				ctx := context.Background()
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						key := "hot"
						if shape == "many-keys" {
							key = keys[i%len(keys)]
							i += 7919
						}
						if _, err := l.Allow(ctx, key, r.rule); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkAllowBatched: 50 goroutines on 10k keys, GCRA, with and without
// WithBatching (the shape of make bench's batched row).
func BenchmarkAllowBatched(b *testing.B) {
	s := redistest.Start(b)
	c := s.Client(b, func(o *redis.Options) { o.PoolSize = 100 })
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
	}
	lim := ratelimit.GCRA(1_000_000, time.Second, 1_000_000)
	for _, size := range []int{0, 16, 64} {
		opts := []ratelimit.Option{ratelimit.WithPrefix(s.Prefix() + "rl:")}
		if size > 0 {
			opts = append(opts, ratelimit.WithBatching(size))
		}
		l, err := ratelimit.New(goredisadapter.New(c), opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("batch="+strconv.Itoa(size), func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			b.SetParallelism(max(50/runtime.GOMAXPROCS(0), 1))
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					i += 7919
					if _, err := l.Allow(ctx, keys[i%len(keys)], lim); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
