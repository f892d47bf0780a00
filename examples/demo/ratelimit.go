package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/naiveratelimit"
	"github.com/redis-primitives/go/ratelimit"
)

// boundary sends ten requests against a limit of 5 per 1000 ms: five in the
// last 52 ms of one fixed bucket and five in the first 52 ms of the next.
// The clock is pinned (naiveratelimit.FixedWindow.Now, ratelimit's test-clock
// option), so the requests land at those instants however slow the machine.
func boundary(ctx context.Context, d *demo, row *Row, _ *Report) error {
	const limit, window = 5, time.Second
	c := d.client()
	// A whole second is a boundary of the fixed window's buckets.
	edge := time.Now().Truncate(time.Second).Add(10 * time.Second)
	var at []time.Time
	for i := range 5 {
		at = append(at, edge.Add(time.Duration(-52+10*i)*time.Millisecond))
	}
	for i := range 5 {
		at = append(at, edge.Add(time.Duration(12+10*i)*time.Millisecond))
	}

	var clock atomic.Int64 // the pinned time, in Unix nanoseconds
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	fixed := &naiveratelimit.FixedWindow{Client: c, Limit: limit, Window: window, Now: now}
	lim, err := ratelimit.New(goredisadapter.New(c), ratelimit.WithPrefix(d.prefix+"ratelimit:"), ratelimit.WithServerTimeForTests(now))
	if err != nil {
		return err
	}
	naiveKey := d.prefix + "naive-fixed:" + randomHex(4)
	logKey := "boundary-" + randomHex(4)
	var naiveAdmitted, logAdmitted []time.Time
	for _, t := range at {
		clock.Store(t.UnixNano())
		ok, err := fixed.Allow(ctx, naiveKey)
		if err != nil {
			return fmt.Errorf("naive fixed window: %w", err)
		}
		if ok {
			naiveAdmitted = append(naiveAdmitted, t)
		}
		res, err := lim.Allow(ctx, logKey, ratelimit.SlidingLog(limit, window))
		if err != nil {
			return fmt.Errorf("sliding log: %w", err)
		}
		if res.Allowed {
			logAdmitted = append(logAdmitted, t)
		}
	}
	naiveMost, logMost := mostInWindow(naiveAdmitted, window), mostInWindow(logAdmitted, window)
	span := spanOf(naiveAdmitted)
	row.add("failure", fmt.Sprintf("naive fixed window admitted %d in %s against %d per %s",
		len(naiveAdmitted), fmtMs(span), limit, fmtMs(window)), map[string]any{
		"admitted": len(naiveAdmitted), "sent": len(at), "span_ms": ms(span),
		"most_in_one_window": naiveMost, "limit": limit, "window_ms": ms(window),
	})
	row.add("fix", fmt.Sprintf("sliding log admitted %d", len(logAdmitted)), map[string]any{
		"admitted": len(logAdmitted), "sent": len(at), "most_in_one_window": logMost,
	})
	row.expect(naiveMost > limit, "the naive fixed window admitted at most %d in one %v window, expected more than %d", naiveMost, window, limit)
	row.expect(logMost <= limit, "the sliding log admitted %d in one %v window, limit %d", logMost, window, limit)
	row.expect(len(logAdmitted) == limit, "the sliding log admitted %d, want exactly %d (the first five fit, the second five do not)", len(logAdmitted), limit)
	return nil
}

// mostInWindow is the largest number of the times inside any window
// (t-w, t].
func mostInWindow(times []time.Time, w time.Duration) int {
	s := append([]time.Time(nil), times...)
	sort.Slice(s, func(i, j int) bool { return s[i].Before(s[j]) })
	most, lo := 0, 0
	for hi := range s {
		for !s[lo].After(s[hi].Add(-w)) {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}

func spanOf(times []time.Time) time.Duration {
	if len(times) == 0 {
		return 0
	}
	lo, hi := times[0], times[0]
	for _, t := range times {
		if t.Before(lo) {
			lo = t
		}
		if t.After(hi) {
			hi = t
		}
	}
	return hi.Sub(lo)
}

// concurrency releases 100 callers at once against a limit of 5 per minute:
// first through the client-side sliding window (trim, count and add as
// three round trips), then through the Lua sliding log (one script).
func concurrency(ctx context.Context, d *demo, row *Row, _ *Report) error {
	const callers, limit, window = 100, 5, time.Minute
	c := d.client(func(o *redis.Options) { o.PoolSize = callers })
	// Loopback answers in tens of microseconds, and two busy cores can run
	// one caller's three round trips before the next is scheduled at all, so
	// a burst can look serial. Between app servers and Redis a round trip
	// takes a LAN's fraction of a millisecond, which is the gap the other
	// callers fall into: both variants run with it added to every command.
	c.AddHook(redistest.Latency(lanRoundTrip))
	// Open every connection first, so the callers interleave on the server
	// instead of queueing behind connection set-up.
	if _, err := together(ctx, callers, func(ctx context.Context) (bool, error) {
		return true, c.Ping(ctx).Err()
	}); err != nil {
		return err
	}

	sw := &naiveratelimit.SlidingWindow{Client: c, Limit: limit, Window: window}
	naiveKey := d.prefix + "naive-sliding:" + randomHex(4)
	naiveAdmitted, err := together(ctx, callers, func(ctx context.Context) (bool, error) { return sw.Allow(ctx, naiveKey) })
	if err != nil {
		return fmt.Errorf("naive sliding window: %w", err)
	}

	lim, err := ratelimit.New(goredisadapter.New(c), ratelimit.WithPrefix(d.prefix+"ratelimit:"))
	if err != nil {
		return err
	}
	key := "concurrent-" + randomHex(4)
	luaAdmitted, err := together(ctx, callers, func(ctx context.Context) (bool, error) {
		res, err := lim.Allow(ctx, key, ratelimit.SlidingLog(limit, window))
		return res.Allowed, err
	})
	if err != nil {
		return fmt.Errorf("sliding log: %w", err)
	}
	text := fmt.Sprintf("client-side sliding window admitted %d/%d against %d", naiveAdmitted, callers, limit)
	row.add("failure", text, map[string]any{"admitted": naiveAdmitted, "callers": callers, "limit": limit, "round_trip_ms": lanRoundTrip.Seconds() * 1000})
	row.add("fix", fmt.Sprintf("Lua admitted %d/%d", luaAdmitted, callers), map[string]any{"admitted": luaAdmitted, "callers": callers, "limit": limit, "round_trip_ms": lanRoundTrip.Seconds() * 1000})
	row.expect(naiveAdmitted > limit, "the client-side sliding window admitted %d/%d, expected more than %d", naiveAdmitted, callers, limit)
	row.expect(luaAdmitted == limit, "the Lua sliding log admitted %d/%d, want exactly %d", luaAdmitted, callers, limit)
	return nil
}

// lanRoundTrip is the delay the concurrency scenario adds to each command.
const lanRoundTrip = 300 * time.Microsecond

// together runs f in n goroutines released at the same instant and returns
// how many reported true.
func together(ctx context.Context, n int, f func(context.Context) (bool, error)) (int, error) {
	var (
		wg       sync.WaitGroup
		admitted atomic.Int64
		mu       sync.Mutex
		first    error
	)
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			ok, err := f(ctx)
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				return
			}
			if ok {
				admitted.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	return int(admitted.Load()), first
}
