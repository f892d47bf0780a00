package ratelimit_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// A sliding log writes one sorted-set member per request it charges, all
// in one script, and Redis runs nothing else meanwhile: AllowN(10^6) on a
// log of a million a second held every client of the server for 1.8 s,
// and Take of 10^9 for minutes, where SCRIPT KILL could not stop it (the
// script had written). A call may charge a log at most 10,000 requests;
// more is ErrInvalidN, before any round trip, whatever the call.
func TestASlidingLogCallChargingMoreThanItWritesAtOnceIsRefusedBeforeItHoldsTheServer(t *testing.T) {
	s := redistest.Start(t)
	_, l := limiter(t, s)
	ctx := context.Background()
	log := ratelimit.SlidingLog(1_000_000, time.Second)
	big := ratelimit.Policy{ratelimit.GCRA(1_000_000, time.Second, 1_000_000), log}
	calls := map[string]func() error{
		"AllowN":         func() error { _, err := l.AllowN(ctx, "k", log, 10_001); return err },
		"Take":           func() error { _, err := l.Take(ctx, "k", log, 1_000_000); return err },
		"Reserve":        func() error { _, err := l.Reserve(ctx, "k", log, 200_000, time.Minute); return err },
		"AllowN, policy": func() error { _, err := l.AllowN(ctx, "k", big, 200_000); return err },
		"WaitN":          func() error { _, err := l.WaitN(ctx, "k", log, 200_000); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ratelimit.ErrInvalidN) {
			t.Errorf("%s of more than 10,000 on a log: %v, want ErrInvalidN", name, err)
		}
	}
	rs, err := l.Reserve(ctx, "r", log, 10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Commit(ctx, 200_000); !errors.Is(err, ratelimit.ErrInvalidN) {
		t.Errorf("Commit of 200,000 on a log's reservation: %v, want ErrInvalidN", err)
	}
	if _, err := rs.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	if res, err := l.Peek(ctx, "k", log); err != nil || res.Remaining != 1_000_000 {
		t.Fatalf("after the refused calls: %+v, %v; want nothing charged", res, err)
	}

	start := time.Now()
	res, err := l.AllowN(ctx, "k", log, 10_000)
	t.Logf("AllowN(10,000) on a log: %+v, %v, in %v", res, err, time.Since(start))
	if err != nil || !res.Allowed {
		t.Fatalf("AllowN(10,000): %+v, %v; want it admitted", res, err)
	}
}

// A window or period of more than ten years is ErrInvalidLimit. Longer
// ones passed the checks and then went wrong on every call: a sliding
// log's window past the server's clock in µs (about 57 years) failed on
// the server with a bare Lua error, and a sliding counter's of 200 years
// overflowed its reset (twice the window) into negative RetryAfter and
// ResetAfter, on which Wait spun, 82,000 commands in a second.
func TestAWindowOfMoreThanTenYearsIsRefusedInsteadOfFailingOrOverflowing(t *testing.T) {
	s := redistest.Start(t)
	_, l := limiter(t, s)
	ctx := context.Background()
	const year = 365 * 24 * time.Hour
	for _, lim := range []ratelimit.Limit{
		ratelimit.SlidingLog(1, 100*year),
		ratelimit.SlidingCounter(1, 200*year),
		ratelimit.SlidingCounter(1, math.MaxInt64),
		ratelimit.GCRA(1, 11*year, 1),
	} {
		if _, err := l.Allow(ctx, "far", lim); !errors.Is(err, ratelimit.ErrInvalidLimit) {
			t.Errorf("%v: %v, want ErrInvalidLimit", lim, err)
		}
	}
	for name, lim := range algorithms(1, 10*year) {
		first := allow(t, l, "ten-"+name, lim)
		second := allow(t, l, "ten-"+name, lim)
		t.Logf("%s over ten years: %+v, then %+v", name, first, second)
		if !first.Allowed || second.Allowed || second.RetryAfter <= 0 || second.ResetAfter <= 0 {
			t.Errorf("%s of 1 per ten years: %+v, then %+v; want one admitted, then a rejection with a positive wait", name, first, second)
		}
	}
}

// A sliding counter keeps two windows' counts, which the script holds as
// Lua numbers: from 2^52 requests a window their sum is no longer exact,
// and a limit of math.MaxInt admitted AllowN(3) with a Remaining of
// -2^63. Such a limit is ErrInvalidLimit, as the log's and GCRA's limits
// past what their scripts count exactly are.
func TestASlidingCounterOfTwoToTheFiftyTwoIsRefusedInsteadOfMiscounting(t *testing.T) {
	s := redistest.Start(t)
	_, l := limiter(t, s)
	ctx := context.Background()
	for _, n := range []int{math.MaxInt, 1<<53 + 10, 1 << 52} {
		if _, err := l.AllowN(ctx, "huge", ratelimit.SlidingCounter(n, time.Second), 3); !errors.Is(err, ratelimit.ErrInvalidLimit) {
			t.Errorf("SlidingCounter(%d): %v, want ErrInvalidLimit", n, err)
		}
	}
	const n = 1<<52 - 1
	res, err := l.AllowN(ctx, "large", ratelimit.SlidingCounter(n, time.Second), 3)
	if err != nil || !res.Allowed || res.Remaining != n-3 {
		t.Fatalf("SlidingCounter(2^52-1), AllowN(3): %+v, %v; want admitted with %d remaining", res, err, n-3)
	}
}
