package ratelimit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// A twin is a Limiter with a deny cache and one without, each on a server
// of its own, on one pinned clock. Every call goes to both, so both servers
// hold the same history, and every answer of the cached one must equal the
// other's, field for field, admitted or rejected.
type twin struct {
	c              *redis.Client // the cached Limiter's
	cached, server *ratelimit.Limiter
}

func newTwin(t *testing.T, clk *clock, opts ...ratelimit.Option) twin {
	t.Helper()
	return newTwinOn(t, clk, clk, opts...)
}

// newTwinOn is newTwin with a clock for each: the cached one on cclk.
func newTwinOn(t *testing.T, cclk, sclk *clock, opts ...ratelimit.Option) twin {
	t.Helper()
	var w twin
	w.c, w.cached = limiter(t, redistest.Start(t, redistest.Own()),
		append([]ratelimit.Option{ratelimit.WithServerTimeForTests(cclk.Now), ratelimit.WithDenyCache(64)}, opts...)...)
	_, w.server = limiter(t, redistest.Start(t, redistest.Own()), ratelimit.WithServerTimeForTests(sclk.Now))
	return w
}

// allow calls Allow on both and fails unless the answers are equal.
func (w twin) allow(t *testing.T, key string, r ratelimit.Rule) ratelimit.Result {
	t.Helper()
	got, want := allow(t, w.cached, key, r), allow(t, w.server, key, r)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Allow(%q, %v):\n cache  %+v\n server %+v", key, r, got, want)
	}
	return got
}

// reset calls Reset on both.
func (w twin) reset(t *testing.T, key string, r ratelimit.Rule) {
	t.Helper()
	for _, l := range []*ratelimit.Limiter{w.cached, w.server} {
		if err := l.Reset(context.Background(), key, r); err != nil {
			t.Fatal(err)
		}
	}
}

// A rejection of a Limit and of a Policy holding just that Limit are
// different answers (a Policy's has Each); one must never be read as the
// other. Reading one as the other panicked (index out of range) one way
// and returned a RetryAfter of 0 the other.
func TestDenyCacheNeverAnswersAPolicyOfOneWithTheLimitsEntryOrTheOtherWayRound(t *testing.T) {
	lim := ratelimit.GCRA(2, time.Hour, 2)
	for name, order := range map[string][2]ratelimit.Rule{
		"limit first":  {lim, ratelimit.Policy{lim}},
		"policy first": {ratelimit.Policy{lim}, lim},
	} {
		t.Run(name, func(t *testing.T) {
			clk := newClock(epoch)
			w := newTwin(t, clk)
			for range 3 { // the third is rejected and cached
				w.allow(t, "k", order[0])
			}
			clk.Add(time.Millisecond)
			w.allow(t, "k", order[1])
			w.allow(t, "k", order[0])
		})
	}
}

// Keys may hold any byte. A cache entry named by joining the key and the
// limits with a separator the key may hold rejected a fresh key whose
// name spelled another key's entry.
func TestDenyCacheDoesNotRejectAFreshKeyThatSpellsAnotherKeysEntry(t *testing.T) {
	clk := newClock(epoch)
	w := newTwin(t, clk)
	a, b := ratelimit.GCRA(2, time.Hour, 2), ratelimit.SlidingLog(2, time.Hour)
	for range 3 { // both limits run out together: the third is cached
		w.allow(t, "u", ratelimit.Policy{a, b})
	}
	// "u", then a's state name, joined with NUL: what the old cache
	// wrote for ("u", Policy{a, b}) when asked for this key and b.
	fresh := "u\x00g2:1h:2"
	if res := w.allow(t, fresh, b); !res.Allowed {
		t.Fatalf("a fresh key was rejected: %+v", res)
	}
}

// This Limiter's own Reset is seen at once under every rule that shares a
// limit with the one reset, not only under the rule passed to Reset.
func TestLimitersOwnResetIsSeenAtOnceByEveryRuleOfTheKey(t *testing.T) {
	a, b := ratelimit.GCRA(2, time.Hour, 2), ratelimit.SlidingLog(2, time.Hour)
	p := ratelimit.Policy{a, b}
	for name, c := range map[string]struct{ spend, reset, ask ratelimit.Rule }{
		"policy reset, its limit asked":    {a, p, a},
		"limit reset, its policy asked":    {p, a, p},
		"limit reset, other limit asked":   {p, a, b},
		"policy reset, the policy asked":   {p, p, p},
		"limit reset, the policy spent":    {p, b, a},
		"policy reset, spent as its limit": {b, p, b},
	} {
		t.Run(name, func(t *testing.T) {
			clk := newClock(epoch)
			w := newTwin(t, clk)
			for range 3 {
				w.allow(t, "k", c.spend)
			}
			w.allow(t, "k", c.ask) // rejected, cached
			w.reset(t, "k", c.reset)
			clk.Add(time.Millisecond)
			w.allow(t, "k", c.ask)
			w.allow(t, "k", c.spend)
		})
	}
}

// slowHook delays the next command or pipeline by d before it is sent.
type slowHook struct{ next atomic.Int64 }

func (h *slowHook) delay() {
	if d := time.Duration(h.next.Swap(0)); d > 0 {
		time.Sleep(d)
	}
}

func (h *slowHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *slowHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.delay(); return next(ctx, cmd) }
}

func (h *slowHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.delay(); return next(ctx, cmds) }
}

// A rejected call that took 40 ms to reach the server was decided 40 ms
// after it was sent. A cache that measured waits from the send answered a
// RetryAfter 40 ms shorter than the server's, and a client that waited it
// was refused. Waits measured from the reply are never shorter.
func TestCachedRetryAfterIsNeverShorterThanTheServersAfterALatencySpike(t *testing.T) {
	const spike = 40 * time.Millisecond
	for name, lim := range algorithms(3, 400*time.Millisecond) {
		t.Run(name, func(t *testing.T) {
			s := redistest.Start(t, redistest.Own())
			var slow slowHook
			c, cached := limiter(t, s, ratelimit.WithDenyCache(16))
			c.AddHook(&slow)
			_, server := limiter(t, s)
			ctx := context.Background()
			for round := range 3 {
				var key string
				for attempt := 0; ; attempt++ {
					key = fmt.Sprintf("k%d-%d", round, attempt)
					for allow(t, server, key, lim).Allowed {
					}
					first := allow(t, server, key, lim)
					if first.Allowed {
						t.Fatal("admitted after a rejection")
					}
					// The next rejection reaches the server late; the cache keeps it.
					time.Sleep(first.RetryAfter / 4)
					slow.next.Store(int64(spike))
					res, err := cached.Allow(ctx, key, lim)
					if err != nil {
						t.Fatal(err)
					}
					if !res.Allowed {
						break
					}
					// A busy machine slept past first's RetryAfter: there was
					// no rejection to cache. Again, on a new key.
					if attempt == 4 {
						t.Fatalf("round %d: admitted on 5 attempts after sleeping a quarter of a %v RetryAfter: the machine overslept each time", round, first.RetryAfter)
					}
					t.Logf("round %d: admitted after sleeping %v of a %v RetryAfter (a busy machine); again", round, first.RetryAfter/4, first.RetryAfter)
				}
				got := allow(t, cached, key, lim) // answered by the cache
				want := allow(t, server, key, lim)
				if got.RetryAfter < want.RetryAfter {
					t.Fatalf("round %d: cached RetryAfter %v is shorter than the server's %v", round, got.RetryAfter, want.RetryAfter)
				}
				time.Sleep(got.RetryAfter)
				if again := allow(t, server, key, lim); !again.Allowed {
					t.Fatalf("round %d: waited the cached RetryAfter of %v and was refused (server: retry after %v)", round, got.RetryAfter, again.RetryAfter)
				}
				t.Logf("round %d: cached RetryAfter %v, server's %v, admitted after waiting the cached one", round, got.RetryAfter, want.RetryAfter)
			}
		})
	}
}

// WithDenyCache's size is a cap: memory grows with the rejections cached,
// not at New.
func TestDenyCacheAllocatesWithUseNotAtNew(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l, err := ratelimit.New(goredisadapter.New(c), ratelimit.WithDenyCache(1_000_000))
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(l)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
		t.Fatalf("New(WithDenyCache(1e6)) allocated %d KiB before any call", grew>>10)
	} else {
		t.Logf("New(WithDenyCache(1e6)) allocated %d B", grew)
	}
}

// The hook sees an answer from the cache marked as one, with no latency,
// and the number of hook calls is the number of calls.
func TestHookMarksAnswersFromTheDenyCacheAndGivesThemNoLatency(t *testing.T) {
	s := redistest.Start(t)
	var got decisions
	c, l := limiter(t, s, ratelimit.WithDenyCache(16), ratelimit.WithHook(got.hook))
	lim := ratelimit.GCRA(1, time.Hour, 1)
	allow(t, l, "k", lim) // admitted
	before := evalCalls(t, c)
	for range 50 {
		allow(t, l, "k", lim) // rejected: the first by the server, the rest by the cache
	}
	if calls := evalCalls(t, c) - before; calls != 1 {
		t.Fatalf("%d script calls for 50 rejections, want 1", calls)
	}
	all := got.take()
	if len(all) != 51 {
		t.Fatalf("hook saw %d decisions for 51 calls", len(all))
	}
	cachedN := 0
	for i, d := range all {
		if d.Cached {
			cachedN++
			if d.Latency != 0 || d.Outcome != "rejected" {
				t.Errorf("decision %d from the cache: %+v; want rejected with no latency", i, d)
			}
		} else if d.Latency <= 0 {
			t.Errorf("decision %d from the server has latency %v", i, d.Latency)
		}
	}
	if cachedN != 49 {
		t.Fatalf("%d decisions marked Cached, want 49", cachedN)
	}
}

// The cache, checked field for field against the server on random traces
// that mix Limits, Policies (one of a single limit among them), Allow,
// Take and AllowN, this Limiter's Resets, pauses of every length, and a
// clock that moves on while a call is in flight (a latency spike: the
// pinned clock is read for the decision, and has moved on when the reply
// arrives; the server twin decides at the decision's time, and its clock
// then catches up).
func TestDenyCacheAnswersAsTheServerOnRandomTraces(t *testing.T) {
	a, b, c := ratelimit.GCRA(3, time.Second, 3), ratelimit.SlidingLog(4, 2*time.Second), ratelimit.SlidingCounter(5, 3*time.Second)
	rules := []ratelimit.Rule{a, b, c, ratelimit.Policy{a}, ratelimit.Policy{a, b}, ratelimit.Policy{b, c}, ratelimit.Policy{c, a, b}}
	for seed := range uint64(3) {
		t.Run("seed "+string(rune('0'+seed)), func(t *testing.T) {
			clk := newClock(epoch.Add(time.Duration(seed)*time.Second + 123_456*time.Microsecond))
			sclk := newClock(clk.Now())
			spike := &clockSpike{clk: clk}
			var seen decisions
			w := newTwinOn(t, clk, sclk, ratelimit.WithHook(seen.hook))
			w.c.AddHook(spike)
			rng := rand.New(rand.NewPCG(seed, 7))
			ctx := context.Background()
			for step := range 1500 {
				key := "k" + string(rune('0'+rng.IntN(2)))
				r := rules[rng.IntN(len(rules))]
				if rng.IntN(8) == 0 {
					spike.next.Store(int64(time.Duration(rng.IntN(50_000)) * time.Microsecond))
				}
				switch op := rng.IntN(20); {
				case op == 0:
					w.reset(t, key, r)
					sclk.Set(clk.Now())
				case op < 4:
					n := 1 + rng.IntN(3)
					got, err1 := w.cached.Take(ctx, key, r, n)
					want, err2 := w.server.Take(ctx, key, r, n)
					if err1 != nil || err2 != nil {
						t.Fatal(err1, err2)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("step %d: Take(%q, %v, %d):\n cache  %+v\n server %+v", step, key, r, n, got, want)
					}
				default:
					w.allow(t, key, r)
				}
				// Mostly bursts, sometimes a pause past a window.
				d := time.Duration(rng.IntN(40_000)) * time.Microsecond
				if rng.IntN(15) == 0 {
					d = time.Duration(rng.IntN(3_500)) * time.Millisecond
				}
				clk.Add(d)
				sclk.Set(clk.Now())
			}
			hits := 0
			for _, d := range seen.take() {
				if d.Cached {
					hits++
				}
			}
			t.Logf("seed %d: 1500 steps, %d answered by the cache, every answer equal to the server's", seed, hits)
			if hits < 50 {
				t.Fatalf("only %d answers from the cache: the trace does not exercise it", hits)
			}
		})
	}
}

// clockSpike moves a pinned clock on by next while the next command or
// pipeline is in flight.
type clockSpike struct {
	clk  *clock
	next atomic.Int64
}

func (h *clockSpike) move() { h.clk.Add(time.Duration(h.next.Swap(0))) }

func (h *clockSpike) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *clockSpike) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { defer h.move(); return next(ctx, cmd) }
}

func (h *clockSpike) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { defer h.move(); return next(ctx, cmds) }
}

// slowReply delays the reply of the next pipeline (every script call is
// one) by d, after the server ran it. Single commands, the connection's
// set-up among them, pass.
type slowReply struct{ slowHook }

func (h *slowReply) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *slowReply) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { defer h.delay(); return next(ctx, cmds) }
}

// What measuring waits from the reply costs: a rejection whose reply took
// 40 ms to arrive is answered by the cache up to 40 ms after the server
// would admit again, and no longer.
func TestCachedRejectionOutlivesTheServersByAtMostTheRepliesTimeInFlight(t *testing.T) {
	const spike = 40 * time.Millisecond
	s := redistest.Start(t, redistest.Own())
	var slow slowReply
	c, cached := limiter(t, s, ratelimit.WithDenyCache(16))
	c.AddHook(&slow)
	_, server := limiter(t, s)
	ctx := context.Background()
	lim := ratelimit.GCRA(4, 400*time.Millisecond, 2)
	for allow(t, server, "k", lim).Allowed {
	}
	slow.next.Store(int64(spike))
	if res := allow(t, cached, "k", lim); res.Allowed {
		t.Fatal("admitted after a rejection")
	}
	var serverAdmits time.Time
	for {
		p, err := server.Peek(ctx, "k", lim)
		if err != nil {
			t.Fatal(err)
		}
		if p.Allowed && serverAdmits.IsZero() {
			serverAdmits = time.Now()
		}
		if allow(t, cached, "k", lim).Allowed {
			break
		}
		time.Sleep(500 * time.Microsecond)
	}
	late := time.Since(serverAdmits)
	t.Logf("reply %v in flight: the cache rejected for %v after the server admitted again", spike, late)
	if late > spike+20*time.Millisecond {
		t.Fatalf("the cache rejected for %v after the server admitted: more than the reply's %v in flight", late, spike)
	}
}
