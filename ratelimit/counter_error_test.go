package ratelimit_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// recordedTrace is a deterministic stand-in for recorded traffic: 60s of
// Poisson arrivals whose rate wanders between 40 and 200 per second, with a
// burst of 60 requests in 30ms every 7 seconds. Same seed, same trace.
func recordedTrace() []time.Duration {
	r := rand.New(rand.NewPCG(2026, 5))
	var trace []time.Duration
	at := time.Duration(0)
	for at < 60*time.Second {
		rate := 120 + 80*float64(int(at/(3*time.Second))%3-1) // 40, 120, 200 per second in turn
		at += time.Duration(r.ExpFloat64() / rate * float64(time.Second)).Truncate(time.Microsecond)
		trace = append(trace, at)
		if at/(7*time.Second) != (at+time.Duration(1e9/rate))/(7*time.Second) {
			for i := range 60 {
				trace = append(trace, at+time.Duration(i)*500*time.Microsecond)
			}
		}
	}
	return trace
}

// persistAll removes the TTL of every key matching ARGV[1].
var persistAll = redis.NewScript(`for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('PERSIST', k) end`)

// replay sends the trace to a log and a counter of the same limit with the
// clock pinned to each request's time, and returns which were admitted.
// wrong counts the counter's decisions that the exact rule, applied to the
// counter's own history, would have made the other way: over (admitted with
// the limit already reached in the true window) and under (rejected with
// room).
func replay(t *testing.T, trace []time.Duration, limit int, window time.Duration) (logAdmitted, counterAdmitted []time.Time, over, under int) {
	t.Helper()
	s := redistest.Start(t)
	clk := newClock(epoch)
	c, l := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now))
	exact, approx := ratelimit.SlidingLog(limit, window), ratelimit.SlidingCounter(limit, window)
	ctx := context.Background()
	for _, d := range trace {
		at := epoch.Add(d)
		clk.Set(at)
		a, b := allow(t, l, "exact", exact).Allowed, allow(t, l, "approx", approx).Allowed
		// The decisions run on pinned times, the keys' TTLs on the
		// server's clock: a replay slower than a window (a busy machine
		// under -race) would see a key expire that the pinned clock still
		// counts (seen: the log admitting 200 in one window). Expiry is
		// not what this compares.
		if err := persistAll.Run(ctx, c, nil, s.Prefix()+"rl:*").Err(); err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		if a {
			logAdmitted = append(logAdmitted, at)
		}
		if b {
			counterAdmitted = append(counterAdmitted, at)
		}
		inWindow := 0
		for i := len(counterAdmitted) - 1; i >= 0 && counterAdmitted[i].After(at.Add(-window)); i-- {
			inWindow++
		}
		if b {
			inWindow-- // itself
		}
		switch {
		case b && inWindow >= limit:
			over++
		case !b && inWindow < limit:
			under++
		}
	}
	return logAdmitted, counterAdmitted, over, under
}

func TestSlidingCounterErrorAgainstTheExactLogOnARecordedTrace(t *testing.T) {
	const limit, window = 100, time.Second
	trace := recordedTrace()
	exact, approx, over, under := replay(t, trace, limit, window)
	mostExact, mostApprox := maxInWindow(exact, window), maxInWindow(approx, window)
	t.Logf("trace: %d requests over 60s, limit %d per %v", len(trace), limit, window)
	t.Logf("log admitted %d (most in any window %d); counter admitted %d (most in any window %d, %.1f%% over the limit)",
		len(exact), mostExact, len(approx), mostApprox, 100*float64(mostApprox-limit)/limit)
	t.Logf("counter decisions the exact rule would have reversed, on the counter's own history: %d admitted over the limit, %d rejected with room: %.2f%% of %d",
		over, under, 100*float64(over+under)/float64(len(trace)), len(trace))
	t.Logf("admitted in total: counter %+.2f%% against the log", 100*float64(len(approx)-len(exact))/float64(len(exact)))
	if mostExact > limit {
		t.Fatalf("the log admitted %d in one window, limit %d", mostExact, limit)
	}
	// The counter's documented bound: never 2x the limit in a window.
	if mostApprox >= 2*limit {
		t.Fatalf("the counter admitted %d in one window, beyond its bound of < 2x%d", mostApprox, limit)
	}
	// On this trace it stays close to the exact log where it matters: at
	// most 15% over the limit in any window and within 5% of the log's total
	// (measured figures in the log lines). Single decisions are another
	// matter: the trace runs above the limit, so most requests arrive at
	// the margin, and there the weighted estimate reverses about a quarter
	// of them, both ways. That is logged, not bounded: the counter promises
	// no per-request agreement.
	diff := len(approx) - len(exact)
	if mostApprox > limit*115/100 || diff*20 > len(exact) || -diff*20 > len(exact) {
		t.Fatalf("the counter drifted from the log: %d in one window, %d admitted against %d",
			mostApprox, len(approx), len(exact))
	}
}

func TestSlidingCounterWorstCaseIsBunchedPreviousWindow(t *testing.T) {
	// The counter assumes the previous bucket's requests were spread evenly.
	// Put all of them in its last millisecond, then ask once a millisecond
	// through the next bucket: the counter lets the weighted count decay
	// while every one of those requests is still inside the true window.
	const limit, window = 100, time.Second
	var trace []time.Duration
	for i := range limit {
		trace = append(trace, 10*time.Second-time.Millisecond+time.Duration(i)*time.Microsecond)
	}
	for ms := range 999 {
		trace = append(trace, 10*time.Second+time.Duration(ms)*time.Millisecond)
	}
	exact, approx, _, _ := replay(t, trace, limit, window)
	mostExact, mostApprox := maxInWindow(exact, window), maxInWindow(approx, window)
	t.Logf("bunched trace: log at most %d in any window, counter at most %d (limit %d)", mostExact, mostApprox, limit)
	if mostExact != limit {
		t.Fatalf("log: %d in one window, want exactly %d", mostExact, limit)
	}
	if mostApprox <= limit*3/2 || mostApprox >= 2*limit {
		t.Fatalf("counter: %d in one window; the documented worst case approaches but stays under 2x%d", mostApprox, limit)
	}
}

// On a day-long window a real shortfall can be a few tens of microseconds'
// worth of the previous bucket's weight, far less than 1e-9 of a request.
// A fixed float epsilon would round it up into an extra request.
func TestSlidingCounterOnALongWindowDoesNotAdmitEarly(t *testing.T) {
	s := redistest.Start(t)
	const day = 24 * time.Hour
	bucket := epoch.Truncate(day) // bucket boundaries are multiples of the window since the Unix epoch
	clk := newClock(bucket.Add(day - time.Millisecond))
	_, l := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now))
	lim := ratelimit.SlidingCounter(2, day)
	for i := range 2 {
		if !allow(t, l, "k", lim).Allowed {
			t.Fatalf("request %d at the end of the bucket was denied", i+1)
		}
	}
	// Halfway into the next bucket, less 40µs: the previous bucket still
	// weighs 2·(1/2 + 40µs/day) > 1, so no whole request is free yet.
	clk.Set(bucket.Add(day + day/2 - 40*time.Microsecond))
	if res := allow(t, l, "k", lim); res.Allowed {
		t.Fatalf("admitted 40µs before the estimate allows it: %+v", res)
	}
	clk.Set(bucket.Add(day + day/2))
	if res := allow(t, l, "k", lim); !res.Allowed {
		t.Fatalf("denied at the moment the estimate frees one request: %+v", res)
	}
}
