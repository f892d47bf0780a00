package ratelimit_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// A policy's script repeats each algorithm's arithmetic (policy.lua): every
// limit of a policy must answer what the limit's own script answers on the
// same state, field for field. A mirror key replays the policy's decisions
// with the single-limit scripts: Allow where the policy admitted (every
// limit consumed), Peek where it rejected (none did).
func TestPolicyLimitDisagreesWithItsOwnScript(t *testing.T) {
	s := redistest.Start(t)
	clk := newClock(epoch.Add(123_456 * time.Microsecond)) // off the window boundaries
	_, l := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now))
	ctx := context.Background()
	p := ratelimit.Policy{
		ratelimit.SlidingLog(4, time.Second),
		ratelimit.SlidingCounter(7, 3*time.Second),
		ratelimit.GCRA(2, time.Second, 3),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	admitted, rejected, bound := 0, 0, map[ratelimit.Limit]int{}
	for step := range 400 {
		// Mostly bursts (µs to ms apart), sometimes a long pause.
		d := time.Duration(rng.IntN(300_000)) * time.Microsecond
		if rng.IntN(10) == 0 {
			d = time.Duration(rng.IntN(4_000)) * time.Millisecond
		}
		clk.Add(d)
		got, err := l.Allow(ctx, "policy", p)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Each) != len(p) {
			t.Fatalf("step %d: %d results in Each, want %d", step, len(got.Each), len(p))
		}
		for i, lim := range p {
			var want ratelimit.Result
			if got.Allowed {
				want, err = l.Allow(ctx, "mirror", lim)
			} else {
				want, err = l.Peek(ctx, "mirror", lim)
			}
			if err != nil {
				t.Fatal(err)
			}
			e := got.Each[i]
			if e.Allowed != want.Allowed || e.Limit != want.Limit || e.Granted != want.Granted || e.Remaining != want.Remaining ||
				e.RetryAfter != want.RetryAfter || e.ResetAfter != want.ResetAfter || e.Each != nil || want.Each != nil {
				t.Fatalf("step %d at +%v, policy allowed=%v: limit %v answered %+v in the policy, %+v alone", step, clk.Now().Sub(epoch), got.Allowed, lim, e, want)
			}
		}
		if got.Allowed {
			admitted++
		} else {
			rejected++
			bound[got.Limit]++
		}
	}
	// Both paths must have been exercised many times, each limit binding.
	if admitted < 50 || rejected < 50 || len(bound) != len(p) {
		t.Fatalf("%d admitted and %d rejected of 400, rejections bound by %v: the sequence does not exercise every path", admitted, rejected, bound)
	}
}
