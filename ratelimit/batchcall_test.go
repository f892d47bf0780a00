package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// scriptCalls is what a server says it ran: EVALSHA and EVAL calls
// (INFO commandstats).
func scriptCalls(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_eval"); ok {
			_, fields, _ := strings.Cut(rest, ":")
			for _, f := range strings.Split(fields, ",") {
				if v, ok := strings.CutPrefix(f, "calls="); ok {
					k, _ := strconv.ParseInt(v, 10, 64)
					n += k
				}
			}
		}
	}
	return n
}

// batchCalls is a client hook that counts, per pipeline, the batch.lua
// calls and the decisions they carry, and reports a pipeline with two
// batch.lua calls (on one server, two calls for one node).
type batchCalls struct {
	mu                sync.Mutex
	pipelines, calls  int
	batched, twoToOne int
}

func (h *batchCalls) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *batchCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *batchCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		nodes := map[string]bool{}
		calls, batched, two := 0, 0, 0
		for _, c := range cmds {
			args := c.Args()
			if d := decisionsIn(args); len(args) > 3 && (fmt.Sprint(args[1]) == ratelimit.BatchSHA) {
				calls++
				batched += d
				if nodes[""] {
					two++
				}
				nodes[""] = true
			}
		}
		h.mu.Lock()
		h.pipelines++
		h.calls += calls
		h.batched += batched
		h.twoToOne += two
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (h *batchCalls) seen() (pipelines, calls, batched, twoToOne int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pipelines, h.calls, h.batched, h.twoToOne
}

// hammer runs callers goroutines making calls on keys until stop is
// closed, and counts their outcomes: admitted per key, the calls that
// failed (ErrReplyLost apart) with the first error.
type outcomes struct {
	mu       sync.Mutex
	admitted map[string]int
	calls    atomic.Int64
	failed   atomic.Int64
	lost     atomic.Int64
	first    error
}

func hammer(l *ratelimit.Limiter, callers int, key func(g, i int) string, rule ratelimit.Rule, stop chan struct{}) (*outcomes, func()) {
	o := &outcomes{admitted: map[string]int{}}
	var wg sync.WaitGroup
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := key(g, i)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				res, err := l.Allow(ctx, k, rule)
				cancel()
				o.calls.Add(1)
				switch {
				case errors.Is(err, ratelimit.ErrReplyLost):
					o.lost.Add(1)
				case err != nil:
					if o.failed.Add(1) == 1 {
						o.mu.Lock()
						o.first = err
						o.mu.Unlock()
					}
				case res.Allowed:
					o.mu.Lock()
					o.admitted[k]++
					o.mu.Unlock()
				}
			}
		}()
	}
	return o, wg.Wait
}

// A batch's decisions are one script call on a single server: the server
// must have run about as many script calls as there were round trips,
// far fewer than the decisions, and every pipeline must carry one.
func TestBatchedDecisionsAreOneScriptCallPerBatchOnOneServer(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c, l := limiter(t, s, ratelimit.WithBatching(64))
	ctx := context.Background()
	if err := ratelimit.LoadBatchScript(ctx, c); err != nil {
		t.Fatal(err)
	}
	rule := ratelimit.Policy{ratelimit.GCRA(1_000_000, time.Second, 1_000_000), ratelimit.SlidingCounter(1_000_000, time.Minute)}
	allow(t, l, "warm", rule)
	hook := &batchCalls{}
	c.AddHook(hook)
	before := scriptCalls(t, c)
	stop := make(chan struct{})
	o, wait := hammer(l, 100, func(g, i int) string { return "u" + strconv.Itoa((g*7919+i)%1000) }, rule, stop)
	time.Sleep(time.Second)
	close(stop)
	wait()
	ran := scriptCalls(t, c) - before
	pipelines, calls, batched, two := hook.seen()
	decisions := o.calls.Load()
	t.Logf("%d decisions in %d round trips; the server ran %d script calls, %d of them batch.lua carrying %d decisions", decisions, pipelines, ran, calls, batched)
	if o.failed.Load() != 0 || o.lost.Load() != 0 {
		t.Fatalf("%d calls failed (%v), %d lost", o.failed.Load(), o.first, o.lost.Load())
	}
	if ran != int64(pipelines) || two != 0 {
		t.Fatalf("%d script calls in %d round trips (%d with two batch.lua calls): want one call per round trip", ran, pipelines, two)
	}
	if ran*4 > decisions || int64(batched)*2 < decisions {
		t.Fatalf("%d script calls for %d decisions, %d of them batched: want most decisions batched, several per call", ran, decisions, batched)
	}
}

// 500 goroutines batched, on the server's clock: in the test's time T no
// key may be admitted more than a limit allows in T (a log of n per w: at
// most n in each w, so n·ceil(T/w); GCRA of burst b and n per w: b + n·T/w),
// and the server's own count of a log must be what callers were told.
func TestBatchedDecisionsNeverOverAdmitTo500Goroutines(t *testing.T) {
	s := redistest.Start(t)
	c, l := limiter(t, s, ratelimit.WithBatching(64))
	const w = 200 * time.Millisecond
	log := ratelimit.SlidingLog(20, w)
	gcra := ratelimit.GCRA(20, w, 5)
	rules := map[string]ratelimit.Rule{"log": log, "gcra": gcra, "policy": ratelimit.Policy{ratelimit.SlidingLog(30, w), ratelimit.GCRA(20, w, 10)}}
	for name, rule := range rules {
		t.Run(name, func(t *testing.T) {
			allow(t, l, name+":warm", rule)
			warm(t, func(ctx context.Context) error { return c.Ping(ctx).Err() }, 100)
			stop := make(chan struct{})
			start := time.Now()
			o, wait := hammer(l, 500, func(g, i int) string { return name + ":" + strconv.Itoa((g+i)%4) }, rule, stop)
			time.Sleep(1200 * time.Millisecond)
			close(stop)
			wait()
			elapsed := time.Since(start)
			if o.failed.Load() != 0 || o.lost.Load() != 0 {
				t.Fatalf("%d calls failed (%v), %d lost", o.failed.Load(), o.first, o.lost.Load())
			}
			windows := float64((elapsed + w - 1) / w)
			bound := map[string]float64{"log": 20 * windows, "gcra": 5 + 20*elapsed.Seconds()/w.Seconds(), "policy": min(30*windows, 10+20*elapsed.Seconds()/w.Seconds())}[name]
			total := 0
			for k := range 4 {
				key := name + ":" + strconv.Itoa(k)
				got := o.admitted[key]
				total += got
				if float64(got) > bound {
					t.Errorf("key %s: %d admitted in %v, more than the %.0f the limit allows", key, got, elapsed, bound)
				}
			}
			t.Logf("%s: %d calls, %d admitted on 4 keys in %v (at most %.0f a key)", name, o.calls.Load(), total, elapsed, bound)
			if total == 0 {
				t.Fatal("nothing admitted: the test proves nothing")
			}
		})
	}
}

// A Ring places keys by a hash go-redis does not expose: its batches stay
// pipelines of per-decision calls (no batch.lua call), and decide exactly.
func TestBatchingOnARingKeepsOneCallPerDecisionAndAdmitsExactly(t *testing.T) {
	s := redistest.Start(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": s.Addr()}, PoolSize: 100})
	t.Cleanup(func() { _ = ring.Close() })
	l, err := ratelimit.New(goredisadapter.New(ring), ratelimit.WithPrefix(s.Prefix()+"ring:"), ratelimit.WithBatching(16))
	if err != nil {
		t.Fatal(err)
	}
	hook := &batchCalls{}
	ring.AddHook(hook)
	lim := ratelimit.GCRA(10, time.Hour, 10)
	got := together(t, 200, func(i int) (bool, error) {
		res, err := l.Allow(context.Background(), "k"+strconv.Itoa(i%4), lim)
		return res.Allowed, err
	})
	if pipelines, calls, _, _ := hook.seen(); pipelines == 0 || calls != 0 || got != 40 {
		t.Fatalf("%d admitted, want 40; %d batch.lua calls in %d pipelines, want none on a Ring", got, calls, pipelines)
	}
}
