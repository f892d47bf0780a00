package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

func TestPolicyRejectionConsumesNoOtherLimit(t *testing.T) {
	s := redistest.Start(t)
	clk := newClock(epoch)
	c, l := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now))
	ctx := context.Background()
	perSecond := ratelimit.SlidingLog(3, time.Second).Named("burst")
	perDay := ratelimit.SlidingCounter(5, 24*time.Hour).Named("daily")
	gcra := ratelimit.GCRA(1, time.Hour, 100).Named("hourly") // refills nothing meanwhile
	p := ratelimit.Policy{perSecond, perDay, gcra}

	for i := range 3 {
		clk.Add(time.Millisecond)
		if res := allow(t, l, "k", p); !res.Allowed {
			t.Fatalf("request %d rejected: %+v", i, res)
		}
	}
	// The per-second log binds: 10 attempts within the same second.
	for range 10 {
		clk.Add(time.Millisecond)
		res := allow(t, l, "k", p)
		if res.Allowed || res.Limit != perSecond {
			t.Fatalf("4th request in a second: allowed=%v bound by %v, want rejected by %v", res.Allowed, res.Limit.Name(), perSecond.Name())
		}
	}
	peek, err := l.Peek(ctx, "k", p)
	if err != nil {
		t.Fatal(err)
	}
	if r := peek.Each[1].Remaining; r != 2 {
		t.Fatalf("daily limit has %d left after 3 admitted and 10 rejected, want 2: a rejection consumed it", r)
	}
	if r := peek.Each[2].Remaining; r != 97 {
		t.Fatalf("gcra has %d left, want 97", r)
	}

	// A second later the daily limit binds after two more; the log must not
	// record the rejected ones either.
	clk.Add(time.Second)
	for range 2 {
		if !allow(t, l, "k", p).Allowed {
			t.Fatal("rejected with room in every limit")
		}
	}
	for range 5 {
		res := allow(t, l, "k", p)
		if res.Allowed || res.Limit != perDay {
			t.Fatalf("6th request in a day: allowed=%v bound by %v, want rejected by daily", res.Allowed, res.Limit.Name())
		}
		// The counter reopens once the weighted count of today's 5, as
		// tomorrow's previous bucket, has fallen to 4: a fifth into tomorrow.
		now := clk.Now()
		tomorrow := now.Truncate(24 * time.Hour).Add(24 * time.Hour)
		if want := tomorrow.Sub(now) + 24*time.Hour/5; res.RetryAfter != want {
			t.Fatalf("daily limit retry after %v, want %v", res.RetryAfter, want)
		}
	}
	n, err := c.ZCard(ctx, s.Prefix()+"rl:{k}:l3:1s").Result()
	if err != nil || n != 2 { // the first 3 aged out; the 5 rejected must not be there
		t.Fatalf("per-second log holds %d members (%v), want 2: rejected requests were recorded", n, err)
	}
}

func TestPolicyAllowNIsAllOrNothing(t *testing.T) {
	s := redistest.Start(t)
	clk := newClock(epoch)
	_, l := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now))
	ctx := context.Background()
	p := ratelimit.Policy{ratelimit.SlidingLog(10, time.Second), ratelimit.GCRA(1, time.Minute, 6)}
	if res, err := l.AllowN(ctx, "k", p, 4); err != nil || !res.Allowed || res.Granted != 4 {
		t.Fatalf("AllowN(4) = %+v, %v", res, err)
	}
	res, err := l.AllowN(ctx, "k", p, 3) // the log has 6 left, GCRA 2
	if err != nil || res.Allowed || res.Granted != 0 || res.Limit.Algorithm() != ratelimit.AlgorithmGCRA {
		t.Fatalf("AllowN(3) with 2 left in GCRA = %+v, %v; want rejected by GCRA", res, err)
	}
	if res.Each[0].Remaining != 6 || res.Each[1].Remaining != 2 {
		t.Fatalf("remaining after a rejected AllowN: log %d, gcra %d; want 6, 2", res.Each[0].Remaining, res.Each[1].Remaining)
	}
	// Take grants what the tightest limit has.
	res, err = l.Take(ctx, "k", p, 5)
	if err != nil || !res.Allowed || res.Granted != 2 {
		t.Fatalf("Take(5) with 2 left = %+v, %v; want 2 granted", res, err)
	}
	res, err = l.Take(ctx, "k", p, 5)
	if err != nil || res.Allowed || res.Granted != 0 || res.RetryAfter != time.Minute {
		t.Fatalf("Take(5) with none left = %+v, %v; want rejected, retry after exactly 1m (one token per minute, clock pinned)", res, err)
	}
}
