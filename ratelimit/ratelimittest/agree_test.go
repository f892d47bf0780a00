package ratelimittest_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/ratelimittest"
)

// decider is the method set the double shares with *ratelimit.Limiter.
type decider interface {
	Allow(ctx context.Context, key string, r ratelimit.Rule) (ratelimit.Result, error)
	AllowN(ctx context.Context, key string, r ratelimit.Rule, n int) (ratelimit.Result, error)
	Take(ctx context.Context, key string, r ratelimit.Rule, n int) (ratelimit.Result, error)
	Peek(ctx context.Context, key string, r ratelimit.Rule) (ratelimit.Result, error)
	Wait(ctx context.Context, key string, r ratelimit.Rule) (ratelimit.Result, error)
	WaitN(ctx context.Context, key string, r ratelimit.Rule, n int) (ratelimit.Result, error)
	Reset(ctx context.Context, key string, r ratelimit.Rule) error
}

var (
	_ decider = (*ratelimit.Limiter)(nil)
	_ decider = (*ratelimittest.Limiter)(nil)
)

// epoch is where the traces start: off every window's boundary.
var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Add(123_457 * time.Microsecond)

// pair is a Redis Limiter, pinned to a Clock, and the double on it.
type pair struct {
	clk    *ratelimittest.Clock
	redis  *ratelimit.Limiter
	double *ratelimittest.Limiter
}

func newPair(t *testing.T, s *redistest.Server, prefix string) pair {
	t.Helper()
	clk := ratelimittest.NewClock(epoch)
	// Context deadlines do not bound the client's I/O here: the traces'
	// waits run on a context whose deadline has passed (passed below).
	c := s.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled = false })
	rl, err := ratelimit.New(goredisadapter.New(c), ratelimit.WithPrefix(s.Prefix()+prefix), ratelimit.WithServerTimeForTests(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	d, err := ratelimittest.New(ratelimittest.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	return pair{clk, rl, d}
}

// passed is a context whose deadline has passed but which has not ended:
// WaitN's check that a wait would pass the deadline turns every rejection
// into an immediate error, the same on both sides, while the calls it
// makes still run (the pair's client ignores deadlines).
type passed struct{ context.Context }

func (passed) Deadline() (time.Time, bool) { return time.Unix(0, 0), true }

// A call is one step of a trace.
type call struct {
	op   string // allow, allowN, take, peek, wait, waitN, reset
	key  string
	rule ratelimit.Rule
	n    int
}

func (c call) String() string { return fmt.Sprintf("%s(%q, %v, %d)", c.op, c.key, c.rule, c.n) }

// do runs c on l, with ctx (for waits, with a deadline that has passed).
func (c call) do(ctx context.Context, l decider) (ratelimit.Result, error) {
	switch c.op {
	case "allow":
		return l.Allow(ctx, c.key, c.rule)
	case "allowN":
		return l.AllowN(ctx, c.key, c.rule, c.n)
	case "take":
		return l.Take(ctx, c.key, c.rule, c.n)
	case "peek":
		return l.Peek(ctx, c.key, c.rule)
	case "wait":
		return l.Wait(passed{ctx}, c.key, c.rule)
	case "waitN":
		return l.WaitN(passed{ctx}, c.key, c.rule, c.n)
	default:
		return ratelimit.Result{}, l.Reset(ctx, c.key, c.rule)
	}
}

// capacity is the most a rule admits at once.
func capacity(r ratelimit.Rule) int {
	if lim, ok := r.(ratelimit.Limit); ok {
		return lim.Burst()
	}
	m := 1 << 30
	for _, lim := range r.(ratelimit.Policy) {
		m = min(m, lim.Burst())
	}
	return m
}

// A trace is a kind of random sequence of calls and clock moves.
type trace struct {
	name  string
	rules []ratelimit.Rule
	// step returns how far to move the clock before the next call: it may
	// be zero, negative (a clock stepped back) or the last rejection's
	// RetryAfter (a client that waits exactly that long).
	step func(rng *rand.Rand, now time.Time, retry time.Duration) time.Duration
	// shortestTTL is the shortest TTL any key of the trace gets: the
	// server's keys expire in real time while the pinned clock runs at
	// the trace's pace, so the run must end before the first could.
	shortestTTL time.Duration
	// keepAll: no key may expire on the Clock either (the latest time
	// the Clock reaches stays within shortestTTL of the start).
	keepAll bool
}

var (
	logLimit = ratelimit.SlidingLog(5, 30*time.Second)
	counter  = ratelimit.SlidingCounter(8, time.Minute)
	// One per 120s/7, 4 at once: a drain of 7 per µs (not 1), so waits
	// are rounded divisions.
	gcra = ratelimit.GCRA(7, 2*time.Minute, 4)
)

// forward moves the clock forward only, at every pace from one instant to
// minutes apart, in steps that are multiples of grid. On a grid of 1ms
// every wait is a whole number of ms, so a step of exactly the last
// RetryAfter lands on the instant a request leaves the window or the
// bucket refills: the boundaries themselves.
func forward(grid time.Duration) func(rng *rand.Rand, now time.Time, retry time.Duration) time.Duration {
	return func(rng *rand.Rand, now time.Time, retry time.Duration) time.Duration {
		switch p := rng.IntN(100); {
		case p < 25: // a burst: the same instant
			return 0
		case p < 40 && retry > 0: // exactly the wait, or just short of it
			return retry - time.Duration(rng.IntN(2))*grid
		case p < 45: // a counter's bucket boundary (a multiple of its window since 1970), or just short of it
			w := []time.Duration{counter.Window(), 45*time.Second + 777*time.Microsecond}[rng.IntN(2)]
			us, wus := now.UnixMicro(), w.Microseconds()
			return time.Duration((us/wus+1)*wus-us)*time.Microsecond - time.Duration(rng.IntN(2))*grid
		case p < 85:
			return time.Duration(rng.Int64N(int64(3*time.Second/grid))) * grid
		case p < 97:
			return time.Duration(rng.Int64N(int64(30*time.Second/grid))) * grid
		default:
			return time.Duration(30+rng.IntN(120)) * time.Second
		}
	}
}

// forwardRules are every algorithm alone and in two policies sharing
// their state.
var forwardRules = []ratelimit.Rule{logLimit, counter, gcra,
	ratelimit.Policy{logLimit, counter, gcra},
	ratelimit.Policy{gcra.Named("g"), ratelimit.SlidingLog(3, 40*time.Second), ratelimit.SlidingCounter(11, 45*time.Second+777*time.Microsecond)},
}

var traces = []trace{{
	name: "forward-µs", rules: forwardRules, step: forward(time.Microsecond), shortestTTL: 17 * time.Second, // gcra's emission interval
}, {
	name: "forward-ms", rules: forwardRules, step: forward(time.Millisecond), shortestTTL: 17 * time.Second, // gcra's emission interval
}, {
	// The clock steps back as well as forward: the guard every key keeps.
	// Windows and waits are long enough that no key expires within the
	// trace, on the Clock or in real time: the server forgets a key's
	// guard on real time, the double on the Clock's, and a clock stepped
	// back behind a guard one has forgotten would tell them apart.
	name: "backward",
	rules: []ratelimit.Rule{
		ratelimit.SlidingLog(6, 20*time.Minute),
		ratelimit.SlidingCounter(9, 20*time.Minute),
		ratelimit.GCRA(4, time.Hour, 5),
		ratelimit.Policy{ratelimit.SlidingLog(6, 20*time.Minute), ratelimit.SlidingCounter(9, 20*time.Minute), ratelimit.GCRA(4, time.Hour, 5)},
	},
	step: func(rng *rand.Rand, _ time.Time, retry time.Duration) time.Duration {
		switch p := rng.IntN(100); {
		case p < 20:
			return 0
		case p < 45:
			return -time.Duration(rng.Int64N(5_000_000)) * time.Microsecond
		default:
			return time.Duration(rng.Int64N(2_600_000)) * time.Microsecond
		}
	},
	shortestTTL: 15 * time.Minute, // GCRA's emission interval
	keepAll:     true,
}}

// The double's answers are the Redis Limiter's: on random traces of every
// operation, algorithm and policy, at the same pinned instants, every call
// returns the same Result, field for field, and the same error.
func TestDoubleAgreesWithTheRedisLimiterOnRandomTraces(t *testing.T) {
	s := redistest.Start(t)
	// Every trace takes its 3000 steps under -short too: they run in well
	// under a second, and 600 left seed 3 of "backward" one admitted allowN.
	const steps = 3000
	for _, tr := range traces {
		for _, seed := range []uint64{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/seed=%d", tr.name, seed), func(t *testing.T) {
				t.Logf("trace %s, seed %d, %d steps", tr.name, seed, steps)
				agree(t, s, tr, seed, steps)
			})
		}
	}
}

func agree(t *testing.T, s *redistest.Server, tr trace, seed uint64, steps int) {
	p := newPair(t, s, fmt.Sprintf("agree-%s-%d:", tr.name, seed))
	rng := rand.New(rand.NewPCG(seed, 24))
	start := time.Now()
	var retry time.Duration
	latest := epoch
	seen := map[string]int{}
	for step := range steps {
		p.clk.Advance(tr.step(rng, p.clk.Now(), retry))
		if now := p.clk.Now(); now.After(latest) {
			latest = now
		}
		c := call{key: []string{"a", "b"}[rng.IntN(2)], rule: tr.rules[rng.IntN(len(tr.rules))]}
		ops := []string{"allow", "allow", "allowN", "take", "take", "peek", "wait", "waitN", "reset"}
		if c.op = ops[rng.IntN(len(ops))]; c.op == "reset" && rng.IntN(4) != 0 {
			c.op = "allow" // resets are rare
		}
		c.n = 1 + rng.IntN(capacity(c.rule))
		if rng.IntN(25) == 0 {
			c.n = []int{0, -1, capacity(c.rule) + 1}[rng.IntN(3)] // refused as input
		}
		want, werr := c.do(context.Background(), p.redis)
		got, gerr := c.do(context.Background(), p.double)
		if !reflect.DeepEqual(got, want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("seed %d step %d at +%v: %v:\n redis  %+v, %v\n double %+v, %v",
				seed, step, p.clk.Now().Sub(epoch), c, want, werr, got, gerr)
		}
		switch {
		case werr != nil && errors.Is(werr, context.DeadlineExceeded):
			seen["wait past the deadline"]++
		case werr != nil:
			seen["refused input"]++
		case c.op == "reset":
			seen["reset"]++
		case want.Allowed:
			seen[c.op+" admitted"]++
		default:
			seen[c.op+" rejected"]++
			retry = want.RetryAfter
			if len(want.Each) > 0 {
				seen[fmt.Sprintf("policy bound by %v", want.Limit)]++
			}
		}
	}
	elapsed := time.Since(start)
	t.Logf("%d steps in %v; the Clock ended %v from the start and reached +%v: %v", steps, elapsed.Round(time.Millisecond),
		p.clk.Now().Sub(epoch).Round(time.Second), latest.Sub(epoch).Round(time.Second), seen)
	if elapsed >= tr.shortestTTL {
		t.Fatalf("the run took %v, longer than the shortest TTL (%v): the server may have expired a key the double kept", elapsed, tr.shortestTTL)
	}
	if tr.keepAll && latest.Sub(epoch) >= tr.shortestTTL {
		t.Fatalf("the Clock reached +%v, past the shortest TTL (%v): a key may have expired on it", latest.Sub(epoch), tr.shortestTTL)
	}
	// Every path must have been taken, many times.
	for _, k := range []string{"allow admitted", "allow rejected", "allowN admitted", "allowN rejected", "take admitted", "take rejected",
		"peek admitted", "peek rejected", "wait admitted", "wait past the deadline", "refused input"} {
		if seen[k] < 3 {
			t.Errorf("%q happened %d times: the trace does not exercise it", k, seen[k])
		}
	}
}
