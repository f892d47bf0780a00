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
		// -1: no TTL. (-2: the key expired since the scan, as a short
		// limit's key may under load: it had one.)
		if ttl == -1 {
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

// A rejection records its time in the log by renaming the newest entry. On
// a log of one entry, removing that entry first empties the set, Redis
// deletes the key, and the re-added entry lands in a new key without a TTL.
func TestRejectionOnALogOfOneEntryKeepsTheKeysTTL(t *testing.T) {
	s := redistest.Start(t)
	c, l := limiter(t, s)
	ctx := context.Background()
	cases := []struct {
		name string
		rule ratelimit.Rule
	}{
		{"log of one", ratelimit.SlidingLog(1, time.Minute)},
		// The policy's GCRA rejects; the log, holding one entry, is touched.
		{"policy", ratelimit.Policy{ratelimit.GCRA(1, time.Hour, 1), ratelimit.SlidingLog(100, time.Minute)}},
	}
	for _, tc := range cases {
		key := "one-entry-" + strings.ReplaceAll(tc.name, " ", "-")
		if res, err := l.Allow(ctx, key, tc.rule); err != nil || !res.Allowed {
			t.Fatalf("%s: first request: %+v, %v", tc.name, res, err)
		}
		time.Sleep(2 * time.Millisecond) // a later time, so the rejection records it
		if res, err := l.Allow(ctx, key, tc.rule); err != nil || res.Allowed {
			t.Fatalf("%s: second request: %+v, %v; want rejected", tc.name, res, err)
		}
		iter := c.Scan(ctx, 0, s.Prefix()+"rl:{"+key+"}:*", 100).Iterator()
		n := 0
		for iter.Next(ctx) {
			n++
			if ttl := c.PTTL(ctx, iter.Val()).Val(); ttl <= 0 {
				t.Errorf("%s: %s has PTTL %d after a rejection", tc.name, iter.Val(), ttl)
			}
		}
		if err := iter.Err(); err != nil || n == 0 {
			t.Fatalf("%s: scanned %d keys, %v", tc.name, n, err)
		}
	}
}
