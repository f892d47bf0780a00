package ratelimittest_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/ratelimittest"
)

func newDouble(t *testing.T, clk *ratelimittest.Clock) *ratelimittest.Limiter {
	t.Helper()
	l, err := ratelimittest.New(ratelimittest.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Calls from many goroutines at one instant admit exactly the limit: each
// is decided whole, as a script is.
func TestConcurrentCallsAdmitExactlyTheLimit(t *testing.T) {
	l := newDouble(t, ratelimittest.NewClock(epoch))
	for _, lim := range []ratelimit.Limit{logLimit, counter, gcra} {
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				res, err := l.Allow(context.Background(), "k", lim)
				if err != nil {
					t.Error(err)
				}
				if res.Allowed {
					admitted.Add(1)
				}
			})
		}
		wg.Wait()
		if got := admitted.Load(); got != int64(lim.Burst()) {
			t.Errorf("%v: %d of 50 admitted, want %d", lim, got, lim.Burst())
		}
	}
}

// With a Clock, Wait sleeps on it: it returns admitted once the Clock is
// moved to the RetryAfter, and not before.
func TestWaitReturnsWhenTheClockReachesTheRetryAfter(t *testing.T) {
	clk := ratelimittest.NewClock(epoch)
	l := newDouble(t, clk)
	lim := ratelimit.GCRA(1, time.Minute, 1)
	ctx := context.Background()
	if res, err := l.Allow(ctx, "k", lim); err != nil || !res.Allowed {
		t.Fatalf("first request: %+v, %v", res, err)
	}
	done := make(chan ratelimit.Result)
	go func() {
		res, err := l.Wait(ctx, "k", lim)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	// Short of the minute, the wait goes on (and asks again).
	clk.Advance(59 * time.Second)
	select {
	case res := <-done:
		t.Fatalf("Wait returned 1s before the RetryAfter: %+v", res)
	case <-time.After(50 * time.Millisecond):
	}
	clk.Advance(time.Second)
	select {
	case res := <-done:
		if !res.Allowed || res.Granted != 1 {
			t.Fatalf("Wait returned %+v", res)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return once the Clock reached the RetryAfter")
	}
}

// A Wait that the Clock never frees ends with its context.
func TestWaitEndsWithItsContext(t *testing.T) {
	l := newDouble(t, ratelimittest.NewClock(epoch))
	lim := ratelimit.SlidingLog(1, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := l.Allow(ctx, "k", lim); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(10*time.Millisecond, cancel)
	if _, err := l.Wait(ctx, "k", lim); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on a canceled context: %v, want context.Canceled", err)
	}
}

// A nil option or a nil Clock is ratelimit.ErrInvalidOption, as for
// ratelimit.New.
func TestNewRefusesANilOptionAndANilClock(t *testing.T) {
	for name, opt := range map[string]ratelimittest.Option{"nil option": nil, "nil clock": ratelimittest.WithClock(nil)} {
		if l, err := ratelimittest.New(opt); !errors.Is(err, ratelimit.ErrInvalidOption) || l != nil {
			t.Errorf("%s: %v, %v; want ErrInvalidOption", name, l, err)
		}
	}
}

// Without a Clock the double runs on the process's clock, and Wait
// sleeps on it.
func TestWithoutAClockTheDoubleRunsOnRealTime(t *testing.T) {
	l, err := ratelimittest.New()
	if err != nil {
		t.Fatal(err)
	}
	lim := ratelimit.GCRA(1, 20*time.Millisecond, 1)
	ctx := context.Background()
	if res, err := l.Allow(ctx, "k", lim); err != nil || !res.Allowed {
		t.Fatalf("first request: %+v, %v", res, err)
	}
	start := time.Now()
	if res, err := l.Wait(ctx, "k", lim); err != nil || !res.Allowed {
		t.Fatalf("Wait: %+v, %v", res, err)
	}
	if d := time.Since(start); d < 15*time.Millisecond {
		t.Fatalf("Wait returned after %v, before the 20ms interval could pass", d)
	}
}
