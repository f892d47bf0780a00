package ratelimit_test

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// evalCalls counts the script calls the server has run.
func evalCalls(t *testing.T, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for line := range strings.SplitSeq(info, "\r\n") {
		if !strings.HasPrefix(line, "cmdstat_eval") {
			continue
		}
		_, rest, _ := strings.Cut(line, "calls=")
		n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
		total += n
	}
	return total
}

// A cached rejection must be the Result the server would give at the same
// instant, field for field, until the server would admit; and it must be
// answered without a round trip.
func TestDenyCacheAnswersWhatTheServerWouldUntilRetryAfter(t *testing.T) {
	rules := map[string]ratelimit.Rule{
		"log":     ratelimit.SlidingLog(3, time.Second),
		"counter": ratelimit.SlidingCounter(3, time.Second),
		"gcra":    ratelimit.GCRA(3, time.Second, 3),
		// Every limit runs out together: cached as a whole.
		"policy": ratelimit.Policy{ratelimit.SlidingLog(3, time.Second), ratelimit.GCRA(1, time.Hour, 3)},
	}
	for name, rule := range rules {
		t.Run(name, func(t *testing.T) {
			s := redistest.Start(t, redistest.Own())
			clk := newClock(epoch.Add(123*time.Millisecond + 456*time.Microsecond))
			c, cached := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now), ratelimit.WithDenyCache(16))
			_, server := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now))
			ctx := context.Background()
			var first ratelimit.Result
			for {
				res, err := cached.Allow(ctx, "k", rule)
				if err != nil {
					t.Fatal(err)
				}
				if !res.Allowed {
					first = res
					break
				}
				clk.Add(7 * time.Millisecond)
			}
			start := clk.Now()
			// A policy's answer is predictable until its first limit may
			// admit again: the cache goes to the server from then on.
			until := first.RetryAfter
			for _, e := range first.Each {
				if !e.Allowed {
					until = min(until, e.RetryAfter)
				}
			}
			for _, d := range []time.Duration{0, time.Microsecond, 999 * time.Microsecond, 5 * time.Millisecond, until / 2, until - time.Millisecond} {
				clk.Set(start.Add(d))
				before := evalCalls(t, c)
				got, err := cached.Allow(ctx, "k", rule)
				if err != nil {
					t.Fatal(err)
				}
				took, err := cached.Take(ctx, "k", rule, 2)
				if err != nil {
					t.Fatal(err)
				}
				if calls := evalCalls(t, c) - before; calls != 0 {
					t.Fatalf("+%v: %d script calls for cached rejections, want none", d, calls)
				}
				want, err := server.Allow(ctx, "k", rule)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(took, want) {
					t.Fatalf("+%v: cache answered\n  Allow %+v\n  Take  %+v\nserver %+v", d, got, took, want)
				}
			}
			// AllowN of more than one is not answered by a rejection of one.
			before := evalCalls(t, c)
			if _, err := cached.AllowN(ctx, "k", rule, 2); err != nil {
				t.Fatal(err)
			}
			if evalCalls(t, c) == before {
				t.Fatal("AllowN(2) answered from a cached rejection of one request")
			}
			clk.Set(start.Add(first.RetryAfter))
			res, err := cached.Allow(ctx, "k", rule)
			if err != nil || !res.Allowed {
				t.Fatalf("at the retry-after: %+v, %v; want admitted by the server", res, err)
			}
		})
	}
}

// A policy rejected while another of its limits is partly used cannot be
// predicted (that limit may regain one at any instant): it goes to the
// server every time.
func TestDenyCacheSkipsAPolicyWithAPartlyUsedLimit(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	clk := newClock(epoch)
	c, l := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now), ratelimit.WithDenyCache(16))
	ctx := context.Background()
	p := ratelimit.Policy{ratelimit.GCRA(1, time.Hour, 1), ratelimit.SlidingLog(100, time.Minute)}
	allow(t, l, "k", p)
	if allow(t, l, "k", p).Allowed {
		t.Fatal("second request admitted by a burst of 1")
	}
	before := evalCalls(t, c)
	if res, err := l.Allow(ctx, "k", p); err != nil || res.Allowed {
		t.Fatalf("%+v, %v", res, err)
	}
	if evalCalls(t, c) == before {
		t.Fatal("a rejection with a partly used limit was answered from the cache")
	}
}

func TestDenyCacheHoldsAtMostItsSize(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	clk := newClock(epoch)
	c, l := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now), ratelimit.WithDenyCache(2))
	lim := ratelimit.GCRA(1, time.Hour, 1)
	for _, k := range []string{"a", "b", "c"} {
		allow(t, l, k, lim)
		allow(t, l, k, lim) // rejected, cached; "a" is evicted by "c"
	}
	for _, k := range []string{"b", "c", "a"} {
		wantCalls := 0
		if k == "a" {
			wantCalls = 1
		}
		before := evalCalls(t, c)
		if allow(t, l, k, lim).Allowed {
			t.Fatalf("%s admitted", k)
		}
		if got := evalCalls(t, c) - before; got != wantCalls {
			t.Errorf("%s: %d script calls, want %d", k, got, wantCalls)
		}
	}
	if _, err := ratelimit.New(goredisadapter.New(c), ratelimit.WithDenyCache(0)); err == nil {
		t.Error("WithDenyCache(0) accepted")
	}
}
