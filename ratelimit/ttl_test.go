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
	for _, k := range keys {
		ttl, err := c.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 0 {
			t.Errorf("%s has PTTL %d: a key without a TTL lives forever", k, ttl)
		}
	}
	// Every user key got at least one consuming call, and each limit keeps
	// its state, guard included, in one Redis key of its own: 3 single
	// limits and the policy's 3 make 6 per user key, and nothing else.
	t.Logf("%d keys scanned after the workload, all with a TTL", len(keys))
	perKey := map[string]int{}
	for _, k := range keys {
		user, _, _ := strings.Cut(strings.TrimPrefix(k, s.Prefix()+"rl:"), "}:")
		perKey[user]++
	}
	if len(keys) != 7*6 || len(perKey) != 7 {
		t.Fatalf("found %d keys for %d user keys %v; want 6 for each of 7: one per limit", len(keys), len(perKey), perKey)
	}
}
