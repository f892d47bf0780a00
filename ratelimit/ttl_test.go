package ratelimit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

func TestNoRateLimitKeyIsLeftWithoutATTL(t *testing.T) {
	s := redistest.Start(t)
	c, l := limiter(t, s)
	ctx := context.Background()
	rules := []ratelimit.Rule{
		ratelimit.SlidingLog(3, time.Minute),
		ratelimit.SlidingCounter(3, time.Minute),
		ratelimit.GCRA(1, time.Minute, 3),
		ratelimit.Policy{ratelimit.SlidingLog(2, time.Second), ratelimit.SlidingCounter(5, time.Hour), ratelimit.GCRA(10, time.Second, 4)},
	}
	// Allowed, rejected, taken and peeked requests, on fresh and spent keys,
	// including keys whose only ever call was a rejection-free peek or a
	// rejected AllowN.
	for i := range 20 {
		key := fmt.Sprintf("user:%d", i%7)
		for _, r := range rules {
			var err error
			switch i % 4 {
			case 0:
				_, err = l.Allow(ctx, key, r)
			case 1:
				_, err = l.AllowN(ctx, key, r, 2)
			case 2:
				_, err = l.Take(ctx, key, r, 2)
			case 3:
				_, err = l.Peek(ctx, key, r)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	var keys []string
	iter := c.Scan(ctx, 0, s.Prefix()+"rl:*", 100).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	var metas int
	for _, k := range keys {
		ttl, err := c.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 0 {
			t.Errorf("%s has PTTL %d: a key without a TTL lives forever", k, ttl)
		}
		if strings.HasSuffix(k, ":meta") {
			metas++
		}
	}
	t.Logf("%d keys scanned after the workload, %d of them guard keys, all with a TTL", len(keys), metas)
	if metas != 7 || len(keys) < 7*5 {
		t.Fatalf("found %d keys (%d guard keys); the workload should leave 7 guard keys and state for each limit", len(keys), metas)
	}
}
