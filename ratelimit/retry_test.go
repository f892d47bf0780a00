package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// fill spends a limit with requests spread over the window, so the
// retry-after is not a round number for any algorithm.
func fill(t *testing.T, l *ratelimit.Limiter, clk *clock, key string, lim ratelimit.Limit) ratelimit.Result {
	t.Helper()
	for range 100 {
		res := allow(t, l, key, lim)
		if !res.Allowed {
			return res
		}
		clk.Add(37*time.Millisecond + 123*time.Microsecond)
	}
	t.Fatal("limit never rejected")
	return ratelimit.Result{}
}

func TestRetryAfterIsNeverTooShort(t *testing.T) {
	for name, lim := range algorithms(7, time.Second) {
		t.Run(name, func(t *testing.T) {
			s := redistest.Start(t)
			clk := newClock(epoch.Add(777 * time.Microsecond))
			_, l := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now))
			for round := range 5 {
				res := fill(t, l, clk, "k", lim)
				ra := res.RetryAfter
				if ra <= 0 || ra%time.Millisecond != 0 {
					t.Fatalf("retry after %v, want a positive whole number of milliseconds", ra)
				}
				start := clk.Now()
				clk.Set(start.Add(ra - time.Millisecond))
				if res := allow(t, l, "k", lim); res.Allowed {
					t.Fatalf("round %d: admitted 1ms before the retry-after of %v: it overstates the wait", round, ra)
				}
				clk.Set(start.Add(ra))
				if res := allow(t, l, "k", lim); !res.Allowed {
					t.Fatalf("round %d: waited exactly the retry-after of %v and was rejected (retry now %v)", round, ra, res.RetryAfter)
				}
			}
		})
	}
}

func TestWaitingExactlyRetryAfterIsAdmittedOnRedisClock(t *testing.T) {
	for name, lim := range algorithms(3, 200*time.Millisecond) {
		t.Run(name, func(t *testing.T) {
			s := redistest.Start(t)
			_, l := limiter(t, s)
			var res ratelimit.Result
			for res = allow(t, l, "k", lim); res.Allowed; res = allow(t, l, "k", lim) {
			}
			time.Sleep(res.RetryAfter)
			if again := allow(t, l, "k", lim); !again.Allowed {
				t.Fatalf("slept the retry-after of %v and was rejected (retry now %v)", res.RetryAfter, again.RetryAfter)
			}
		})
	}
}

func TestWaitBlocksUntilTheServerAdmits(t *testing.T) {
	s := redistest.Start(t)
	_, l := limiter(t, s)
	lim := ratelimit.SlidingLog(2, 300*time.Millisecond)
	ctx := context.Background()
	start := time.Now()
	for range 2 {
		if res, err := l.Wait(ctx, "k", lim); err != nil || !res.Allowed {
			t.Fatalf("Wait with room: %+v, %v", res, err)
		}
	}
	res, err := l.Wait(ctx, "k", lim)
	waited := time.Since(start)
	if err != nil || !res.Allowed {
		t.Fatalf("Wait: %+v, %v", res, err)
	}
	// It cannot have been admitted before the first request aged out.
	if waited < 300*time.Millisecond {
		t.Fatalf("third request admitted after %v, window 300ms", waited)
	}
	t.Logf("third request admitted by Wait after %v (window 300ms)", waited)
}

func TestWaitReturnsAtOnceWhenTheRetryPassesTheDeadline(t *testing.T) {
	s := redistest.Start(t)
	_, l := limiter(t, s)
	lim := ratelimit.SlidingLog(1, time.Minute)
	allow(t, l, "k", lim)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := l.Wait(ctx, "k", lim)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Wait took %v to give up on a retry of a minute, should not sleep", d)
	}

	ctx, cancel = context.WithCancel(context.Background())
	lim = ratelimit.SlidingLog(1, 5*time.Second)
	allow(t, l, "k2", lim)
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := l.Wait(ctx, "k2", lim); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want Canceled", err)
	}
}
