package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// pipelines is a client hook that records the size of every pipeline sent
// and reports the start of each on started, if set.
type pipelines struct {
	mu      sync.Mutex
	sizes   []int // decisions per pipeline
	cmds    []int // commands per pipeline
	started chan struct{}
}

func (h *pipelines) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *pipelines) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *pipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		decisions := 0
		for _, c := range cmds {
			decisions += decisionsIn(c.Args())
		}
		h.mu.Lock()
		h.sizes = append(h.sizes, decisions)
		h.cmds = append(h.cmds, len(cmds))
		h.mu.Unlock()
		if h.started != nil {
			select {
			case h.started <- struct{}{}:
			default:
			}
		}
		return next(ctx, cmds)
	}
}

// seen returns the pipelines sent, the decisions they carried, the most
// decisions in one, and the most commands in one.
func (h *pipelines) seen() (batches, calls, largest, commands int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, n := range h.sizes {
		calls += n
		largest = max(largest, n)
		commands = max(commands, h.cmds[i])
	}
	return len(h.sizes), calls, largest, commands
}

// decisionsIn returns the decisions a command carries: those of a
// batch.lua call (EVALSHA or EVAL, 1 key, then per decision m, m keys,
// n, mode, pinned time and m limits), or 1.
func decisionsIn(args []any) int {
	if len(args) < 4 || (fmt.Sprint(args[1]) != ratelimit.BatchSHA && !strings.HasPrefix(fmt.Sprint(args[1]), "#!lua flags=allow-cross-slot-keys\n-- batch.lua")) {
		return 1
	}
	n := 0
	for j := 4; j < len(args); n++ {
		m, _ := args[j].(int)
		j += 2*m + 4
	}
	return n
}

// Batching shares round trips, never decisions: 500 goroutines released at
// once on 5 keys, 100 on each, must get exactly the limit admitted per key,
// for every algorithm and a policy, and no batch may exceed its size.
func TestBatchingAdmitsExactlyTheLimitPerKeyTo500Goroutines(t *testing.T) {
	s := redistest.Start(t)
	const size, callers, keys, n = 16, 500, 5, 37
	rules := map[string]ratelimit.Rule{}
	for name, lim := range algorithms(n, time.Hour) {
		rules[name] = lim
	}
	rules["policy"] = ratelimit.Policy{ratelimit.SlidingCounter(n, time.Hour), ratelimit.GCRA(1000, time.Hour, 1000), ratelimit.SlidingLog(n+1, time.Hour)}
	for name, rule := range rules {
		t.Run(name, func(t *testing.T) {
			hook := &pipelines{}
			c, l := limiter(t, s, ratelimit.WithBatching(size))
			allow(t, l, name+":warm", rule) // loads the script: no NOSCRIPT re-send below
			if err := ratelimit.LoadBatchScript(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			redistest.AddHook(c, hook)
			warm(t, func(ctx context.Context) error { return c.Ping(ctx).Err() }, 100)
			var mu sync.Mutex
			admitted := map[string]int{}
			together(t, callers, func(i int) (bool, error) {
				key := name + ":" + strconv.Itoa(i%keys)
				res, err := l.Allow(context.Background(), key, rule)
				if err == nil && res.Allowed {
					mu.Lock()
					admitted[key]++
					mu.Unlock()
				}
				return res.Allowed, err
			})
			for k := range keys {
				key := name + ":" + strconv.Itoa(k)
				if admitted[key] != n {
					t.Errorf("key %s: %d of %d callers admitted, want exactly %d", key, admitted[key], callers/keys, n)
				}
			}
			batches, calls, largest, commands := hook.seen()
			if calls != callers || largest > size {
				t.Errorf("%d calls in %d pipelines, the largest of %d: want %d calls, none over %d", calls, batches, largest, callers, size)
			}
			// One server: a batch's decisions are one script call.
			if commands != 1 {
				t.Errorf("a pipeline of %d commands: want each batch's decisions sent as one batch.lua call", commands)
			}
			t.Logf("%d calls in %d round trips, the largest batch %d", calls, batches, largest)
		})
	}
}

// One goroutine's calls on a key must reach the server in its order, and
// none may be lost, while 200 others keep the lanes full with other keys:
// its Remaining counts down one by one.
func TestBatchingKeepsOneKeysCallsInOrderUnderLoad(t *testing.T) {
	s := redistest.Start(t)
	_, l := limiter(t, s, ratelimit.WithBatching(8))
	lim := ratelimit.SlidingCounter(1000, time.Hour)
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for g := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := l.Allow(ctx, "noise:"+strconv.Itoa(g*7+i%7), lim); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 100 {
		res, err := l.Allow(ctx, "ordered", lim)
		if err != nil {
			t.Fatal(err)
		}
		if want := 999 - i; !res.Allowed || res.Remaining != want {
			t.Fatalf("call %d: allowed %v, remaining %d, want %d: a call was lost or reordered", i+1, res.Allowed, res.Remaining, want)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// A call's deadline is its own, whoever sends its batch. With the link
// stalled under a batch in flight (a Peek, L, deadline D):
//   - F2 (deadline D−500ms) waits for the lane and ends first: not sent;
//   - L ends at D, its own deadline;
//   - F3 (D+300ms) and F1 (D+10s) go in the next batch, which F1, the
//     later deadline, sends; F3 ends at its deadline while it is in
//     flight (sent: its request is decided when the link resumes);
//   - F1 is admitted once the link resumes.
//
// So the key ends with exactly two requests consumed: F1's and F3's.
func TestBatchingHonoursEachCallsDeadlineWhileItsBatchWaits(t *testing.T) {
	s := redistest.Start(t)
	relay := redistest.StartRelay(t, s.Addr())
	hook := &pipelines{started: make(chan struct{}, 1)}
	c := s.Client(t, func(o *redis.Options) { o.Addr = relay.Addr(); o.PoolSize = 10 })
	redistest.AddHook(c, hook)
	l, err := ratelimit.New(c, ratelimit.WithPrefix(s.Prefix()+"rl:"), ratelimit.WithBatching(16))
	if err != nil {
		t.Fatal(err)
	}
	lim := ratelimit.SlidingCounter(10, time.Hour)
	if _, err := l.Peek(context.Background(), "k", lim); err != nil { // loads the script, opens a connection
		t.Fatal(err)
	}
	<-hook.started

	type result struct {
		res ratelimit.Result
		err error
	}
	call := func(deadline time.Time, peek bool) chan result {
		ch := make(chan result, 1)
		go func() {
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			defer cancel()
			var r result
			if peek {
				r.res, r.err = l.Peek(ctx, "k", lim)
			} else {
				r.res, r.err = l.Allow(ctx, "k", lim)
			}
			ch <- r
		}()
		return ch
	}
	relay.Stall()
	d := time.Now().Add(time.Second)
	lead := call(d, true)
	<-hook.started // L's batch is in flight, held by the relay
	f1 := call(d.Add(10*time.Second), false)
	f3 := call(d.Add(300*time.Millisecond), false)
	f2 := call(d.Add(-500*time.Millisecond), false)

	r := <-f2
	if !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("F2: %v, want its deadline exceeded", r.err)
	}
	select {
	case r := <-lead:
		t.Fatalf("L returned (%v) before F2's earlier deadline let F2 go", r.err)
	default:
	}
	if r := <-lead; !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("L: %v, want its deadline exceeded", r.err)
	}
	if r := <-f3; !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("F3: %v, want its deadline exceeded", r.err)
	}
	relay.Resume()
	if r := <-f1; r.err != nil || !r.res.Allowed {
		t.Fatalf("F1: allowed %v, %v; want admitted after the link resumed", r.res.Allowed, r.err)
	}
	res, err := l.Peek(context.Background(), "k", lim)
	if err != nil {
		t.Fatal(err)
	}
	if res.Remaining != 8 {
		t.Fatalf("remaining %d after F1 and F3, want 8: F2, which never left the queue, must not count", res.Remaining)
	}
}

// The server may lose its script cache (SCRIPT FLUSH, a restart): a batch
// of EVALSHAs answered NOSCRIPT runs again with the source, each decision
// once.
func TestBatchingRecoversFromAFlushedScriptCacheWithoutDoubleCounting(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c, l := limiter(t, s, ratelimit.WithBatching(32))
	ctx := context.Background()
	lim := ratelimit.SlidingLog(1000, time.Hour)
	for round := range 3 {
		if err := c.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		together(t, 50, func(int) (bool, error) {
			res, err := l.Allow(ctx, "flushed", lim)
			return res.Allowed, err
		})
		res, err := l.Peek(ctx, "flushed", lim)
		if err != nil {
			t.Fatal(err)
		}
		if want := 1000 - 50*(round+1); res.Remaining != want {
			t.Fatalf("round %d: remaining %d, want %d", round+1, res.Remaining, want)
		}
	}
}

// Batching on Redis Cluster: a pipeline is split by node, each decision's
// keys stay in one slot.
func TestBatchingOnAClusterAdmitsExactlyTheLimit(t *testing.T) {
	cc := redistest.StartCluster(t).PrimitiveClient(t) // the test's own cluster: no prefix needed to keep it apart
	l, err := ratelimit.New(cc, ratelimit.WithPrefix("rl:"), ratelimit.WithBatching(16))
	if err != nil {
		t.Fatal(err)
	}
	policy := ratelimit.Policy{ratelimit.SlidingLog(7, time.Minute), ratelimit.GCRA(7, time.Minute, 7), ratelimit.SlidingCounter(7, time.Minute)}
	keys := []string{"plain", "a}b", "{x}", "user{7}"}
	got := together(t, 100, func(i int) (bool, error) {
		res, err := l.Allow(context.Background(), keys[i%len(keys)], policy)
		return res.Allowed, err
	})
	if got != 7*len(keys) {
		t.Fatalf("%d admitted over %d keys, want exactly %d", got, len(keys), 7*len(keys))
	}
}

// scripterOnly is a client that runs scripts but cannot pipeline.
type scripterOnly struct{ redis.Scripter }

func TestWithBatchingRefusesABadSizeAndAClientWithoutPipeline(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", Dialer: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no network in this test")
	}})
	defer c.Close()
	for _, size := range []int{0, -1} {
		if _, err := ratelimit.New(c, ratelimit.WithBatching(size)); !errors.Is(err, ratelimit.ErrInvalidOption) {
			t.Errorf("WithBatching(%d): %v, want ErrInvalidOption", size, err)
		}
	}
	if _, err := ratelimit.New(scripterOnly{c}, ratelimit.WithBatching(8)); !errors.Is(err, ratelimit.ErrInvalidOption) {
		t.Errorf("a client without Pipeline: %v, want ErrInvalidOption", err)
	}
	if _, err := ratelimit.New(scripterOnly{c}); err != nil {
		t.Errorf("the same client without batching: %v", err)
	}
}
