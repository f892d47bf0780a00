package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// Keys come from users (API keys, e-mail addresses) and may hold braces.
// Every key of one decision must still sit in one Cluster slot, or a real
// cluster node answers CROSSSLOT, and distinct user keys must keep distinct
// limits.
func TestKeysWithBracesStayInOneSlotAndApartOnACluster(t *testing.T) {
	cc := redistest.StartCluster(t).PrimitiveClient(t) // the test's own cluster: no prefix needed to keep it apart
	l, err := ratelimit.New(cc, ratelimit.WithPrefix("rl:"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	policy := ratelimit.Policy{ratelimit.SlidingLog(2, time.Minute), ratelimit.GCRA(2, time.Minute, 2), ratelimit.SlidingCounter(2, time.Minute)}
	keys := []string{"plain", "a}b", "{x}", "user{7}", "}", "{", "a}:meta", "%7D", "%"}
	for _, key := range keys {
		for i := 0; i < 2; i++ {
			res, err := l.Allow(ctx, key, policy)
			if err != nil {
				t.Fatalf("allow %q on a cluster: %v", key, err)
			}
			if !res.Allowed {
				t.Fatalf("key %q request %d denied: another key's requests were counted against it", key, i+1)
			}
		}
		res, err := l.Allow(ctx, key, policy)
		if err != nil || res.Allowed {
			t.Fatalf("key %q third request: allowed=%v, %v; want denied", key, res.Allowed, err)
		}
		if _, err := l.Peek(ctx, key, policy); err != nil {
			t.Fatalf("peek %q on a cluster: %v", key, err)
		}
		if err := reservationPaths(ctx, l, key, policy, time.Minute); err != nil {
			t.Fatalf("reservations on %q on a cluster: %v", key, err)
		}
	}
}
