package ratelimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/naiveratelimit"
	"github.com/redis-primitives/go/ratelimit"
)

// together runs f in n goroutines released at the same instant and returns
// how many returned true.
func together(t *testing.T, n int, f func(i int) (bool, error)) int {
	t.Helper()
	var (
		wg       sync.WaitGroup
		start    = make(chan struct{})
		admitted atomic.Int64
		errs     = make(chan error, n)
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ok, err := f(i)
			if err != nil {
				errs <- err
				return
			}
			if ok {
				admitted.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return int(admitted.Load())
}

// warm opens the pool's connections first, so that the callers interleave
// on the server rather than queue behind connection set-up.
func warm(t *testing.T, ping func(context.Context) error, n int) {
	t.Helper()
	together(t, n, func(int) (bool, error) { return true, ping(context.Background()) })
}

func TestNaiveClientSideSlidingWindowAdmitsAlmostEveryoneUnderConcurrency(t *testing.T) {
	s := redistest.Start(t)
	c, _ := limiter(t, s)
	// Loopback answers in tens of microseconds, and two busy cores can run
	// one caller's three round trips before the next caller is scheduled at
	// all: then the burst looks serial and admits exactly 5. Between app
	// servers and Redis a round trip takes a LAN's hundreds of microseconds,
	// up to a millisecond across zones, and that is the gap other callers
	// fall into. The client adds a millisecond: with 300 µs, timers that
	// fire late under -race staggered the callers so that a burst admitted
	// 7 of 100 here, and once, in CI, 5; with 1 ms, at least 19 in 200
	// bursts, 100 of them beside three busy loops.
	c.AddHook(redistest.Latency(time.Millisecond))
	warm(t, func(ctx context.Context) error { return c.Ping(ctx).Err() }, 100)
	sw := &naiveratelimit.SlidingWindow{Client: c, Limit: 5, Window: time.Minute}
	key := s.Prefix() + "naive-sliding"
	got := together(t, 100, func(int) (bool, error) { return sw.Allow(context.Background(), key) })
	t.Logf("naive client-side sliding window: %d/100 admitted against a limit of 5", got)
	if got <= 5 {
		t.Fatalf("%d/100 admitted: the three-round-trip window should overshoot the limit of 5", got)
	}
}

func TestEveryLimitAdmitsExactlyItsLimitUnderConcurrency(t *testing.T) {
	const callers, limit = 200, 50
	rules := map[string]ratelimit.Rule{
		"log":     ratelimit.SlidingLog(limit, time.Minute),
		"counter": ratelimit.SlidingCounter(limit, time.Minute),
		// One token per hour: nothing refills during the test.
		"gcra": ratelimit.GCRA(1, time.Hour, limit),
		// The policy's tightest limit binds; the others must count exactly
		// the same 50.
		"policy": ratelimit.Policy{
			ratelimit.SlidingLog(limit, time.Minute),
			ratelimit.SlidingCounter(limit+30, time.Minute),
			ratelimit.GCRA(1, time.Hour, limit+60),
		},
	}
	for name, rule := range rules {
		t.Run(name, func(t *testing.T) {
			s := redistest.Start(t)
			c, l := limiter(t, s)
			warm(t, func(ctx context.Context) error { return c.Ping(ctx).Err() }, 100)
			got := together(t, callers, func(int) (bool, error) {
				res, err := l.Allow(context.Background(), "hot", rule)
				return res.Allowed, err
			})
			t.Logf("%s: %d/%d admitted, limit %d", name, got, callers, limit)
			if got != limit {
				t.Fatalf("%d/%d admitted, want exactly %d", got, callers, limit)
			}
			// What was stored agrees: nothing counted twice, nothing lost.
			peek, err := l.Peek(context.Background(), "hot", rule)
			if err != nil {
				t.Fatal(err)
			}
			each := peek.Each // a Policy's limits; a single Limit's Result is its own state
			if _, single := rule.(ratelimit.Limit); single {
				if len(each) != 0 {
					t.Fatalf("a single limit's Result has Each %v, want nil", each)
				}
				each = []ratelimit.Result{peek}
			} else if len(each) != len(rule.(ratelimit.Policy)) {
				t.Fatalf("peek reports %d limits for a policy of %d", len(each), len(rule.(ratelimit.Policy)))
			}
			for _, e := range each {
				if used := e.Limit.Burst() - e.Remaining; used != limit {
					t.Errorf("%v counted %d requests, want %d", e.Limit, used, limit)
				}
			}
			if name == "log" {
				n, err := c.ZCard(context.Background(), s.Prefix()+"rl:{hot}:l50:1m").Result()
				if err != nil || n != limit {
					t.Fatalf("log holds %d members (%v), want %d", n, err, limit)
				}
			}
		})
	}
}

func TestManyRequestsInOneMicrosecondAreAllRecorded(t *testing.T) {
	// Pinned: every request has the same timestamp. Members must still be
	// distinct, or ZADD would overwrite and the log would undercount.
	s := redistest.Start(t)
	clk := newClock(epoch)
	c, l := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now))
	warm(t, func(ctx context.Context) error { return c.Ping(ctx).Err() }, 100)
	lim := ratelimit.SlidingLog(1000, time.Minute)
	got := together(t, 100, func(int) (bool, error) {
		res, err := l.AllowN(context.Background(), "same-us", lim, 7)
		return res.Allowed, err
	})
	n, err := c.ZCard(context.Background(), s.Prefix()+"rl:{same-us}:l1000:1m").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got != 100 || n != 700 {
		t.Fatalf("%d calls admitted, log holds %d members; want 100 and 700", got, n)
	}
}
