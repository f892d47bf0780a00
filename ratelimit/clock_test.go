package ratelimit_test

import (
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

func TestServerClockSteppedBackDoesNotAdmitExtraRequests(t *testing.T) {
	for name, lim := range algorithms(5, time.Second) {
		t.Run(name, func(t *testing.T) {
			s := redistest.Start(t)
			clk := newClock(epoch.Add(10*time.Second + 900*time.Millisecond))
			_, l := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now))
			spent := fill(t, l, clk, "k", lim)
			admittedBefore := 5

			// The server's clock steps back: 1s, an hour, to the previous
			// bucket of the counter. Nothing new may be admitted, and the
			// wait is measured from the latest time the key has seen.
			top := clk.Now()
			for _, back := range []time.Duration{time.Second, 950 * time.Millisecond, time.Hour, 10 * time.Millisecond} {
				clk.Set(top.Add(-back))
				res := allow(t, l, "k", lim)
				if res.Allowed {
					t.Fatalf("clock stepped back %v: admitted a request beyond the %d already admitted", back, admittedBefore)
				}
				if res.RetryAfter != spent.RetryAfter {
					t.Fatalf("clock stepped back %v: retry after %v, want %v (time on the key stands still)", back, res.RetryAfter, spent.RetryAfter)
				}
			}
			// When the clock has caught up, the limit works as before.
			clk.Set(top.Add(spent.RetryAfter))
			if res := allow(t, l, "k", lim); !res.Allowed {
				t.Fatalf("rejected once the clock passed the retry-after: %+v", res)
			}
		})
	}
}
