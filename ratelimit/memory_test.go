package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// The budget: a counter or GCRA key, filled past a limit of 100 per
// minute, costs at most 100 bytes of MEMORY USAGE, summed over every Redis
// key the limiter makes for it (go-redis/redis_rate's GCRA: 88). A second
// key per user key (the old guard hash) or a hash for the state would
// each break it. The server is the test's own, so keys need no test prefix
// and are named as in production with a short prefix; a key name past 30
// bytes would cost 16 bytes more (Redis allocates it in the next size
// class).
func TestCounterAndGCRAKeepAtMost100BytesPerKey(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c := s.Client(t)
	ctx := context.Background()
	for name, lim := range map[string]ratelimit.Limit{
		"counter": ratelimit.SlidingCounter(100, time.Minute),
		"gcra":    ratelimit.GCRA(100, time.Minute, 100),
	} {
		t.Run(name, func(t *testing.T) {
			// The names of cmd/bench's memory table: key names count.
			prefix, key := name+":", "k17"
			l, err := ratelimit.New(goredisadapter.New(c), ratelimit.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			for range 110 {
				if _, err := l.Allow(ctx, key, lim); err != nil {
					t.Fatal(err)
				}
			}
			keys, err := c.Keys(ctx, prefix+"*").Result()
			if err != nil {
				t.Fatal(err)
			}
			var total int64
			for _, k := range keys {
				n, err := c.MemoryUsage(ctx, k, 0).Result()
				if err != nil {
					t.Fatal(err)
				}
				total += n
			}
			t.Logf("%s: %d Redis key(s) %v, MEMORY USAGE %d B in all", name, len(keys), keys, total)
			if len(keys) != 1 || total > 100 {
				t.Fatalf("%d keys of %d B in all; want one key of at most 100 B", len(keys), total)
			}
		})
	}
}
