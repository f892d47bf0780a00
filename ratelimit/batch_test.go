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

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// pipelines is a client hook that records the size of every pipeline sent.
type pipelines struct {
	mu    sync.Mutex
	sizes []int // decisions per pipeline
	cmds  []int // commands per pipeline
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
// batch.lua call (EVALSHA or EVAL, 1 key, then per decision its head,
// whose first byte is m, and its m keys), or 1.
func decisionsIn(args []any) int {
	if len(args) < 4 || (fmt.Sprint(args[1]) != ratelimit.BatchSHA && !strings.HasPrefix(fmt.Sprint(args[1]), "#!lua flags=allow-cross-slot-keys\n-- batch.lua")) {
		return 1
	}
	n := 0
	for j := 4; j < len(args); n++ {
		head, _ := args[j].(string)
		m := 0
		if head != "" {
			m = int(head[0])
		}
		j += 1 + m
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
			c.AddHook(hook)
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

func TestWithBatchingRefusesABadSize(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", Dialer: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no network in this test")
	}})
	defer c.Close()
	for _, size := range []int{0, -1} {
		if _, err := ratelimit.New(goredisadapter.New(c), ratelimit.WithBatching(size)); !errors.Is(err, ratelimit.ErrInvalidOption) {
			t.Errorf("WithBatching(%d): %v, want ErrInvalidOption", size, err)
		}
	}
}
