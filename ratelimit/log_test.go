package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

func TestSlidingLogReopensOnlyAsRequestsAgeOut(t *testing.T) {
	s := redistest.Start(t)
	clk := newClock(epoch)
	_, l := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now))
	lim := ratelimit.SlidingLog(3, time.Second)

	at := func(ms int, wantAllowed bool, wantRetry time.Duration) {
		t.Helper()
		clk.Set(epoch.Add(time.Duration(ms) * time.Millisecond))
		res := allow(t, l, "k", lim)
		if res.Allowed != wantAllowed || res.RetryAfter != wantRetry {
			t.Fatalf("+%dms: allowed=%v retry=%v, want allowed=%v retry=%v", ms, res.Allowed, res.RetryAfter, wantAllowed, wantRetry)
		}
	}
	at(0, true, 0)
	at(10, true, 0)
	at(20, true, 0)
	at(30, false, 970*time.Millisecond) // the request at +0 leaves at +1000
	at(999, false, time.Millisecond)
	at(1000, true, 0)                   // exactly one slot: the +0 request aged out
	at(1001, false, 9*time.Millisecond) // the +10 request leaves at +1010
}

func TestSlidingLogUsesRedisClockWithoutPinning(t *testing.T) {
	s := redistest.Start(t)
	c, l := limiter(t, s)
	ctx := context.Background()
	lim := ratelimit.SlidingLog(2, 300*time.Millisecond)

	start := time.Now()
	for i := range 2 {
		if !allow(t, l, "k", lim).Allowed {
			t.Fatalf("request %d rejected", i)
		}
	}
	res := allow(t, l, "k", lim)
	if res.Allowed {
		t.Fatal("third request within 300ms admitted")
	}
	if res.RetryAfter <= 0 || res.RetryAfter > 300*time.Millisecond {
		t.Fatalf("retry after %v, want within (0, 300ms]", res.RetryAfter)
	}
	// The members are scored by the server's TIME, not by anything this
	// process sent.
	st, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	server := st.UnixMilli()
	members, err := c.ZRangeWithScores(ctx, s.Prefix()+"rl:{k}:"+"l2:300ms", 0, -1).Result()
	if err != nil || len(members) != 2 {
		t.Fatalf("log holds %v, %v; want 2 members", members, err)
	}
	for _, m := range members {
		if d := server - int64(m.Score)/1000; d < 0 || d > 1000 {
			t.Fatalf("member scored %v us, server clock at %v ms", m.Score, server)
		}
	}
	time.Sleep(time.Until(start.Add(360 * time.Millisecond)))
	if res := allow(t, l, "k", lim); !res.Allowed {
		t.Fatalf("rejected 360ms later (window 300ms): %+v", res)
	}
}
