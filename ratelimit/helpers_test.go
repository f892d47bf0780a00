package ratelimit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// epoch is where pinned clocks start: a whole second, so window and bucket
// boundaries fall on round offsets from it.
var epoch = time.UnixMilli(1_750_000_000_000)

// clock is a pinned clock a test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(at time.Time) *clock { return &clock{t: at} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// limiter returns a server's client and a Limiter whose keys carry the
// server's test prefix.
func limiter(t *testing.T, s *redistest.Server, opts ...ratelimit.Option) (*redis.Client, *ratelimit.Limiter) {
	t.Helper()
	c := s.Client(t, func(o *redis.Options) { o.PoolSize = 100 })
	opts = append([]ratelimit.Option{ratelimit.WithPrefix(s.Prefix() + "rl:")}, opts...)
	l, err := ratelimit.New(goredisadapter.New(c), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, l
}

func allow(t *testing.T, l *ratelimit.Limiter, key string, r ratelimit.Rule) ratelimit.Result {
	t.Helper()
	res, err := l.Allow(context.Background(), key, r)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// algorithms are the three limits of the same shape: n per window.
func algorithms(n int, window time.Duration) map[string]ratelimit.Limit {
	return map[string]ratelimit.Limit{
		"log":     ratelimit.SlidingLog(n, window),
		"counter": ratelimit.SlidingCounter(n, window),
		// GCRA with burst n refills one every window/n: from empty it admits
		// n at once, then one per window/n.
		"gcra": ratelimit.GCRA(n, window, n),
	}
}
