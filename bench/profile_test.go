package bench

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
)

// The hot paths of every contender as Go benchmarks, for profiling with
// -cpuprofile and -memprofile (the figures to quote come from cmd/bench):
//
//	go test -run '^$' -bench 'Lock|Limiter' -benchmem -memprofile mem.out -cpuprofile cpu.out

func benchClient(b *testing.B, s *redistest.Server) *redis.Client {
	return s.Client(b, func(o *redis.Options) { o.PoolSize = 64 })
}

func BenchmarkLockAcquireRelease(b *testing.B) {
	s := redistest.Start(b)
	for _, c := range []struct {
		name string
		make func(*redis.Client) (locker, error)
	}{
		{"ours", func(c *redis.Client) (locker, error) { return oursLocker(c, s.Prefix()+"ours:") }},
		{"redislock", func(c *redis.Client) (locker, error) { return redislockLocker(c), nil }},
		{"redsync", func(c *redis.Client) (locker, error) { return redsyncLocker(c), nil }},
	} {
		b.Run(c.name, func(b *testing.B) {
			lk, err := c.make(benchClient(b, s))
			if err != nil {
				b.Fatal(err)
			}
			var ids atomic.Int64
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				key := s.Prefix() + c.name + ":" + strconv.FormatInt(ids.Add(1), 10)
				for pb.Next() {
					if ok, err := lk(ctx, key); err != nil || !ok {
						b.Error(ok, err)
						return
					}
				}
			})
		})
	}
}

func BenchmarkLimiterAllow(b *testing.B) {
	s := redistest.Start(b)
	for _, im := range limiterImpls() {
		for _, q := range []struct {
			name string
			q    quota
		}{{"admit", admitQuota}, {"reject", rejectQuota}} {
			b.Run(im.name+"/"+q.name, func(b *testing.B) {
				allow, err := im.make(benchClient(b, s), s.Prefix()+"rl:"+q.name+":", q.q)
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := allow(ctx, "hot"); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
