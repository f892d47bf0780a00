package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

func TestResetGivesBackTheFullAllowanceOfThatRuleOnly(t *testing.T) {
	s := redistest.Start(t)
	clk := newClock(epoch)
	_, l := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now), ratelimit.WithDenyCache(8))
	ctx := context.Background()
	other := ratelimit.SlidingCounter(1, time.Hour)
	allow(t, l, "k", other)
	for name, r := range map[string]ratelimit.Rule{
		"log":    ratelimit.SlidingLog(2, time.Hour),
		"gcra":   ratelimit.GCRA(1, time.Hour, 2),
		"policy": ratelimit.Policy{ratelimit.SlidingLog(2, time.Hour), ratelimit.SlidingCounter(5, time.Hour)},
	} {
		allow(t, l, "k", r)
		allow(t, l, "k", r)
		if allow(t, l, "k", r).Allowed { // rejected, and cached
			t.Fatalf("%s: third request admitted", name)
		}
		if err := l.Reset(ctx, "k", r); err != nil {
			t.Fatal(err)
		}
		if res := allow(t, l, "k", r); !res.Allowed || res.Remaining != 1 {
			t.Fatalf("%s after Reset: %+v, want admitted with 1 left", name, res)
		}
	}
	if allow(t, l, "k", other).Allowed {
		t.Fatal("Reset of other rules reset this one")
	}
	if err := l.Reset(ctx, "", other); !errors.Is(err, ratelimit.ErrInvalidKey) {
		t.Errorf("Reset of an empty key: %v", err)
	}
	if err := l.Reset(ctx, "k", nil); !errors.Is(err, ratelimit.ErrInvalidLimit) {
		t.Errorf("Reset of a nil rule: %v", err)
	}
}

func TestWaitNForMoreThanTheRuleCanEverAdmitFailsAtOnce(t *testing.T) {
	s := redistest.Start(t)
	_, l := limiter(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	_, err := l.WaitN(ctx, "k", ratelimit.GCRA(100, time.Second, 10), 11)
	if !errors.Is(err, ratelimit.ErrInvalidN) {
		t.Fatalf("WaitN(11) on a burst of 10: %v, want ErrInvalidN", err)
	}
	_, err = l.WaitN(ctx, "k", ratelimit.Policy{ratelimit.SlidingLog(5, time.Second), ratelimit.SlidingLog(3, time.Minute)}, 4)
	if !errors.Is(err, ratelimit.ErrInvalidN) {
		t.Fatalf("WaitN(4) on a policy whose smaller limit is 3: %v, want ErrInvalidN", err)
	}
}

func TestWaitNBlocksUntilAllNAreAdmitted(t *testing.T) {
	s := redistest.Start(t)
	_, l := limiter(t, s)
	ctx := context.Background()
	lim := ratelimit.GCRA(20, time.Second, 3) // one per 50ms
	if res, err := l.WaitN(ctx, "k", lim, 3); err != nil || !res.Allowed || res.Granted != 3 {
		t.Fatalf("first WaitN(3): %+v, %v", res, err)
	}
	res, err := l.WaitN(ctx, "k", lim, 2) // must wait for two tokens
	if err != nil || !res.Allowed || res.Granted != 2 {
		t.Fatalf("second WaitN(2): %+v, %v", res, err)
	}
}
