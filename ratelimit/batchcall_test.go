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
// batch.lua calls: on one server, or on a Cluster's node client (hooked),
// two calls for one node.
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

func (h *batchCalls) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pipelines, h.calls, h.batched, h.twoToOne = 0, 0, 0, 0
}

// hooked is a ClusterOptions.NewClient that adds h to every node client.
func hooked(h *batchCalls) func(*redis.Options) *redis.Client {
	return func(o *redis.Options) *redis.Client {
		c := redis.NewClient(o)
		redistest.AddHook(c, h)
		return c
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
	redistest.AddHook(c, hook)
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

// On a Cluster a batch's decisions are one script call per primary: no
// round trip may carry two batch.lua calls for one node, and the
// primaries together must have run far fewer script calls than there
// were decisions; and no key may be admitted over its limit.
func TestBatchedDecisionsAreOneScriptCallPerNodeOnACluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	// The Batcher sends each primary's part of a batch through that node's
	// own client: the hook goes on every node client.
	hook := &batchCalls{}
	cc := cl.Client(t, func(o *redis.ClusterOptions) { o.PoolSize = 100; o.NewClient = hooked(hook) })
	l, err := ratelimit.New(cc, ratelimit.WithPrefix("rl:"), ratelimit.WithBatching(64))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	primaries := map[string]*redis.Client{}
	for _, n := range cl.Nodes() {
		c := n.Client(t)
		if info, err := c.Info(ctx, "replication").Result(); err != nil {
			t.Fatal(err)
		} else if strings.Contains(info, "role:master") {
			primaries[n.Addr()] = c
			if err := ratelimit.LoadBatchScript(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
	}
	const limit = 50
	rule := ratelimit.Policy{ratelimit.SlidingLog(limit, time.Hour), ratelimit.GCRA(1_000_000, time.Second, 1_000_000)}
	for i := range 300 { // loads the per-decision script on every primary
		allow(t, l, "warm"+strconv.Itoa(i), rule)
	}
	hook.reset()
	var before int64
	for _, c := range primaries {
		before += scriptCalls(t, c)
	}
	stop := make(chan struct{})
	o, wait := hammer(l, 100, func(g, i int) string { return "u" + strconv.Itoa((g*7919+i)%500) }, rule, stop)
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wait()
	var ran int64
	for _, c := range primaries {
		ran += scriptCalls(t, c)
	}
	ran -= before
	pipelines, calls, batched, two := hook.seen()
	decisions := o.calls.Load()
	t.Logf("%d decisions in %d round trips on %d primaries; they ran %d script calls, %d of them batch.lua carrying %d decisions", decisions, pipelines, len(primaries), ran, calls, batched)
	if o.failed.Load() != 0 || o.lost.Load() != 0 {
		t.Fatalf("%d calls failed (%v), %d lost", o.failed.Load(), o.first, o.lost.Load())
	}
	if two != 0 {
		t.Fatalf("%d round trips carried two batch.lua calls for one node", two)
	}
	if ran*3 > decisions || int64(batched)*2 < decisions {
		t.Fatalf("%d script calls for %d decisions, %d of them batched: want most decisions batched, several per call", ran, decisions, batched)
	}
	for k, n := range o.admitted {
		if n > limit {
			t.Fatalf("key %s: %d admitted, over its limit of %d", k, n, limit)
		}
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

// A batch.lua call carries keys of several slots, all the node's; while
// one of them moves to another node, a call may reach a node that no
// longer has, or does not yet have, some of its keys. It must then fall
// back to the decisions one by one, before writing anything: moving the
// slot in use back and forth under batched decisions on keys of that slot
// and of others, no call may fail, no key may be admitted over its limit,
// and the server must count exactly what callers were told was admitted
// (a write on the wrong node would also make the move fail: BUSYKEY).
func TestBatchedDecisionsSurviveTheirSlotMovingWithoutOverAdmitting(t *testing.T) {
	cl := redistest.StartCluster(t)
	hook := &batchCalls{}
	cc := cl.Client(t, func(o *redis.ClusterOptions) { o.PoolSize = 100; o.NewClient = hooked(hook) })
	ctx := context.Background()
	slot, err := cc.ClusterKeySlot(ctx, "{u0}").Result()
	if err != nil {
		t.Fatal(err)
	}
	var users []string // 8 of the moved slot, then 24 of others
	other := 0
	for i := 0; len(users) < 32; i++ {
		u := "u" + strconv.Itoa(i)
		s, err := cc.ClusterKeySlot(ctx, "{"+u+"}").Result()
		if err != nil {
			t.Fatal(err)
		}
		if s == slot && len(users)-other < 8 {
			users = append(users, u)
		} else if s != slot && other < 24 && len(users) >= 8 {
			users = append(users, u)
			other++
		}
	}
	const limit = 300
	log := ratelimit.SlidingLog(limit, time.Hour) // its members count what was admitted
	rule := ratelimit.Policy{ratelimit.GCRA(1_000_000, time.Second, 1_000_000), log}
	l, err := ratelimit.New(cc, ratelimit.WithPrefix("mv:"), ratelimit.WithBatching(64))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	o, wait := hammer(l, 64, func(g, i int) string { return users[(g+i)%len(users)] }, rule, stop)
	const moves = 6
	for range moves {
		cl.MoveSlot(t, "{u0}", time.Millisecond)
	}
	close(stop)
	wait()
	_, calls, batched, _ := hook.seen()
	counted, admitted := int64(0), int64(0)
	for _, u := range users {
		n, err := cc.ZCard(ctx, "mv:{"+u+"}:l300:1h").Result()
		if err != nil {
			t.Fatal(err)
		}
		counted += n
		a := o.admitted[u]
		admitted += int64(a)
		if a > limit || n > limit {
			t.Errorf("key %s: %d admitted, %d counted, over its limit of %d", u, a, n, limit)
		}
	}
	f, r := o.failed.Load(), o.lost.Load()
	t.Logf("%d migrations of slot %d: %d calls (%d batched in %d batch.lua calls), %d admitted, %d failed, %d ErrReplyLost; the server counted %d",
		moves, slot, o.calls.Load(), batched, calls, admitted, f, r, counted)
	if f != 0 {
		t.Fatalf("%d calls failed while their slot migrated, the first: %v", f, o.first)
	}
	if counted < admitted || counted > admitted+r {
		t.Fatalf("the server counted %d for %d admitted (and %d ErrReplyLost)", counted, admitted, r)
	}
	if batched == 0 {
		t.Fatal("no decision went batched: the test proves nothing")
	}
}

// A Ring places keys by a hash go-redis does not expose: its batches stay
// pipelines of per-decision calls (no batch.lua call), and decide exactly.
func TestBatchingOnARingKeepsOneCallPerDecisionAndAdmitsExactly(t *testing.T) {
	s := redistest.Start(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": s.Addr()}, PoolSize: 100})
	t.Cleanup(func() { _ = ring.Close() })
	l, err := ratelimit.New(ring, ratelimit.WithPrefix(s.Prefix()+"ring:"), ratelimit.WithBatching(16))
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
