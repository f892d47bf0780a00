package election_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// client returns a client of s that honours context deadlines, with a short
// read timeout so that calls to a frozen server end soon.
func client(t testing.TB, s *redistest.Server, tune ...func(*redis.Options)) *redis.Client {
	t.Helper()
	return s.Client(t, append([]func(*redis.Options){func(o *redis.Options) {
		o.ContextTimeoutEnabled = true
		o.ReadTimeout = 500 * time.Millisecond
		o.WriteTimeout = 500 * time.Millisecond
		o.DialTimeout = 500 * time.Millisecond
	}}, tune...)...)
}

// baseConfig is the election name under s's prefix.
func baseConfig(s *redistest.Server, name, node string, ttl, renew time.Duration) election.Config {
	return election.Config{
		Name: name, NodeID: node, TTL: ttl, RenewInterval: renew,
		RetryInterval: renew, Prefix: s.Prefix() + "election:",
	}
}

// event is one transition or failed attempt a Hook was told of, with when it happened.
type event struct {
	kind   string // "elected", "demoted", "follower", "leader", "failed"
	epoch  int64
	reason election.Reason
	held   time.Duration // for "demoted": the term's length
	leader election.LeaderInfo
	err    error // for "failed": the attempt's error
	gaveUp bool  // for "failed": Run returns it
	at     time.Time
}

// recorder records what a Hook is told.
type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) add(e event) {
	e.at = time.Now()
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// hook records the transitions and failed attempts a Config.Hook is told
// of: a failed attempt as Run saw it, unless Run's context ended it.
func (r *recorder) hook() func(context.Context, election.Event) {
	return func(ctx context.Context, e election.Event) {
		switch {
		case e.Op == "elected":
			r.add(event{kind: "elected", epoch: e.Epoch})
		case e.Op == "demoted":
			r.add(event{kind: "demoted", epoch: e.Epoch, reason: e.Reason, held: e.Held})
		case e.Op == "follower":
			r.add(event{kind: "follower", leader: e.Leader})
		case e.Op == "leader_change":
			r.add(event{kind: "leader", leader: e.Leader, epoch: e.Leader.Epoch})
		case e.Op == "attempt" && e.Outcome == "error" && ctx.Err() == nil:
			r.add(event{kind: "failed", err: e.Err, gaveUp: e.GaveUp})
		}
	}
}

func (r *recorder) all() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// of returns the events of kind recorded so far.
func (r *recorder) of(kind string) []event {
	var out []event
	for _, e := range r.all() {
		if e.kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// count returns how many events of kind were recorded.
func (r *recorder) count(kind string) int {
	n := 0
	for _, e := range r.all() {
		if e.kind == kind {
			n++
		}
	}
	return n
}

// nth waits for the n-th (from 1) event of kind and returns it.
func (r *recorder) nth(t testing.TB, within time.Duration, kind string, n int) event {
	t.Helper()
	var got event
	waitFor(t, within, kind, func() bool {
		i := 0
		for _, e := range r.all() {
			if e.kind == kind {
				if i++; i == n {
					got = e
					return true
				}
			}
		}
		return false
	})
	return got
}

// node is one Elector running in a goroutine of the test.
type node struct {
	e      *election.Elector
	rec    *recorder
	cancel context.CancelFunc
	done   chan error
}

// startNode runs an Elector for cfg on c, through goredisadapter. It is
// stopped at cleanup at the latest; Run must return within a few seconds
// of that.
func startNode(t testing.TB, c redis.UniversalClient, cfg election.Config, fn func(context.Context, election.Term) error) *node {
	t.Helper()
	n := &node{rec: &recorder{}, done: make(chan error, 1)}
	if own := cfg.Hook; own != nil {
		rec := n.rec.hook()
		cfg.Hook = func(ctx context.Context, e election.Event) { own(ctx, e); rec(ctx, e) }
	} else {
		cfg.Hook = n.rec.hook()
	}
	e, err := election.New(goredisadapter.New(c), cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.e = e
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go func() { n.done <- e.Run(ctx, fn) }()
	t.Cleanup(func() {
		if err := n.stop(); err != nil {
			t.Errorf("node %s: %v", cfg.NodeID, err)
		}
	})
	return n
}

var errRunStuck = errors.New("run did not return within 10s of its context ending")

// stop cancels the node's Run and waits for it. Run's error, which only
// says the context ended, is checked to match context.Canceled.
func (n *node) stop() error {
	n.cancel()
	select {
	case err, ok := <-n.done:
		if !ok {
			return nil
		}
		close(n.done)
		if !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	case <-time.After(10 * time.Second):
		return errRunStuck
	}
}

// waitFor polls cond until it holds, or fails t after within. Timings are
// taken where things happen (Hook calls), not here.
func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// leaders returns the nodes that report themselves leader now.
func leaders(nodes []*node) []int {
	var out []int
	for i, n := range nodes {
		if n.e.IsLeader() {
			out = append(out, i)
		}
	}
	return out
}

// stats returns the median, minimum and maximum of ds.
func stats(ds []time.Duration) (med, lo, hi time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[0], s[len(s)-1]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
