package clienttest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// Helpers of election_test.go, as election's own tests have them. Their
// names carry "election", as lock's, fence's and semaphore's carry theirs:
// all share this package.

// electionClient returns a client of s with a short timeout, as election's
// own tests make theirs, so that calls to a frozen server end soon.
func electionClient(t testing.TB, k kind, s *redistest.Server) luascripts.Client {
	t.Helper()
	return k.client(t, target{addrs: []string{s.Addr()}, timeout: 500 * time.Millisecond})
}

// electionBaseConfig is the election name under s's prefix.
func electionBaseConfig(s *redistest.Server, name, node string, ttl, renew time.Duration) election.Config {
	return election.Config{
		Name: name, NodeID: node, TTL: ttl, RenewInterval: renew,
		RetryInterval: renew, Prefix: s.Prefix() + "election:",
	}
}

// electionEvent is one transition or failed attempt a Hook was told of, with when it happened.
type electionEvent struct {
	kind   string // "elected", "demoted", "follower", "leader", "failed"
	epoch  int64
	reason election.Reason
	held   time.Duration // for "demoted": the term's length
	leader election.LeaderInfo
	err    error // for "failed": the attempt's error
	gaveUp bool  // for "failed": Run returns it
	at     time.Time
}

// electionRecorder records what a Hook is told.
type electionRecorder struct {
	mu     sync.Mutex
	events []electionEvent
}

func (r *electionRecorder) add(e electionEvent) {
	e.at = time.Now()
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// hook records the transitions and failed attempts a Config.Hook is told
// of: a failed attempt as Run saw it, unless Run's context ended it.
func (r *electionRecorder) hook() func(context.Context, election.Event) {
	return func(ctx context.Context, e election.Event) {
		switch {
		case e.Op == "elected":
			r.add(electionEvent{kind: "elected", epoch: e.Epoch})
		case e.Op == "demoted":
			r.add(electionEvent{kind: "demoted", epoch: e.Epoch, reason: e.Reason, held: e.Held})
		case e.Op == "follower":
			r.add(electionEvent{kind: "follower", leader: e.Leader})
		case e.Op == "leader_change":
			r.add(electionEvent{kind: "leader", leader: e.Leader, epoch: e.Leader.Epoch})
		case e.Op == "attempt" && e.Outcome == "error" && ctx.Err() == nil:
			r.add(electionEvent{kind: "failed", err: e.Err, gaveUp: e.GaveUp})
		}
	}
}

func (r *electionRecorder) all() []electionEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// nth waits for the n-th (from 1) event of kind and returns it.
func (r *electionRecorder) nth(t testing.TB, within time.Duration, kind string, n int) electionEvent {
	t.Helper()
	var got electionEvent
	electionWaitFor(t, within, kind, func() bool {
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

// electionNode is one Elector running in a goroutine of the test.
type electionNode struct {
	e      *election.Elector
	rec    *electionRecorder
	cancel context.CancelFunc
	done   chan error
}

// startElectionNode runs an Elector for cfg on c. It is stopped at cleanup
// at the latest; Run must return within a few seconds of that.
func startElectionNode(t testing.TB, c election.Client, cfg election.Config, fn func(context.Context, election.Term) error) *electionNode {
	t.Helper()
	n := &electionNode{rec: &electionRecorder{}, done: make(chan error, 1)}
	if own := cfg.Hook; own != nil {
		rec := n.rec.hook()
		cfg.Hook = func(ctx context.Context, e election.Event) { own(ctx, e); rec(ctx, e) }
	} else {
		cfg.Hook = n.rec.hook()
	}
	e, err := election.New(c, cfg)
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

var errElectionRunStuck = errors.New("run did not return within 10s of its context ending")

// stop cancels the node's Run and waits for it. Run's error, which only
// says the context ended, is checked to match context.Canceled.
func (n *electionNode) stop() error {
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
		return errElectionRunStuck
	}
}

// electionWaitFor polls cond until it holds, or fails t after within.
// Timings are taken where things happen (Hook calls), not here.
func electionWaitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// electionLeaders returns the nodes that report themselves leader now.
func electionLeaders(nodes []*electionNode) []int {
	var out []int
	for i, n := range nodes {
		if n.e.IsLeader() {
			out = append(out, i)
		}
	}
	return out
}

// electionStats returns the median, minimum and maximum of ds.
func electionStats(ds []time.Duration) (med, lo, hi time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[0], s[len(s)-1]
}

func electionMs(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// electionTermEnd is what a leader's fn saw of its term's end.
type electionTermEnd struct {
	epoch int64
	at    time.Time
	cause error
}

// electionWatchingFn returns an fn that reports when, and why, its context
// ended.
func electionWatchingFn(ends chan<- electionTermEnd) func(context.Context, election.Term) error {
	return func(ctx context.Context, term election.Term) error {
		<-ctx.Done()
		ends <- electionTermEnd{term.Epoch, time.Now(), context.Cause(ctx)}
		return nil
	}
}

// electionFaultNodes starts three nodes, each on a client of its own, on a
// server of the test's own and returns them, the leader's index and each
// node's fn reports.
func electionFaultNodes(t *testing.T, k kind, s *redistest.Server, name string, ttl, renew time.Duration) ([]*electionNode, int, []chan electionTermEnd) {
	t.Helper()
	var nodes []*electionNode
	var ends []chan electionTermEnd
	for i := range 3 {
		ch := make(chan electionTermEnd, 16)
		ends = append(ends, ch)
		nodes = append(nodes, startElectionNode(t, electionClient(t, k, s),
			electionBaseConfig(s, name, fmt.Sprintf("node-%d", i), ttl, renew), electionWatchingFn(ch)))
	}
	electionWaitFor(t, 5*time.Second, "a leader", func() bool { return len(electionLeaders(nodes)) == 1 })
	return nodes, electionLeaders(nodes)[0], ends
}

// checkElectionStepDown checks that the leader stepped down no later than
// its local deadline after a fault at faultAt, for the reason want, with
// fn's context cancelled and its cause saying why.
//
// A leader that wakes more than a renew interval past its deadline steps
// down for ReasonDeadlinePassed, rightly: it was not running. On a machine
// busy compiling, a goroutine can be held back that long (seen once on
// valkey-go, while modules compiled beside the test). Where want is
// ReasonUnreachable, ReasonDeadlinePassed is taken instead only when this
// process was measured held back at least a renew interval meanwhile.
func checkElectionStepDown(t *testing.T, n *electionNode, ends chan electionTermEnd, faultAt time.Time, ttl, renew time.Duration, want election.Reason) {
	t.Helper()
	pauses := redistest.WatchPauses()
	defer pauses.Stop()
	reasonOK := func(r election.Reason) bool {
		if r == want {
			return true
		}
		if held := pauses.Longest(); want == election.ReasonUnreachable && r == election.ReasonDeadlinePassed && held >= renew {
			t.Logf("stepped down for %v, not %v: this process was held back %v, more than the renew interval %v", r, want, held, renew)
			return true
		}
		return false
	}
	epoch, _ := n.e.Epoch()
	// The last successful renewal was sent before the fault, so the local
	// deadline is at most this; IsLeader compares with the clock and must
	// be false from then on, however late any goroutine runs.
	margin := ttl/100 + 2*time.Millisecond
	deadline := faultAt.Add(ttl - margin)
	time.Sleep(time.Until(deadline))
	if n.e.IsLeader() {
		t.Errorf("leader still claims to lead %v after the fault, past its local deadline", time.Since(faultAt))
	}
	dem := n.rec.nth(t, 2*ttl, "demoted", 1)
	end := <-ends
	after := dem.at.Sub(faultAt)
	t.Logf("leader (epoch %d) stepped down %.1fms after the fault (TTL %v, renew %v): %v; fn's context ended %.1fms after the fault, cause: %v",
		dem.epoch, electionMs(after), ttl, renew, dem.reason, electionMs(end.at.Sub(faultAt)), end.cause)
	if !reasonOK(dem.reason) || dem.epoch != epoch {
		t.Errorf("demoted epoch %d for %v, want epoch %d for %v", dem.epoch, dem.reason, epoch, want)
	}
	// It rode the failed renewals out: its last good renewal can be up to
	// one interval (and a round trip) older than the fault, and one more
	// when that renewal's tick ran late on busy cores (seen: 434 ms against
	// a bound of 442); stepping down at the first failed renewal would come
	// within one interval of the fault.
	if low := ttl - 2*renew - margin; after < low {
		t.Errorf("stepped down %v after the fault, before the deadline could have passed (≥ %v)", after, low)
	}
	var d *election.DemotedError
	if !errors.As(end.cause, &d) || !reasonOK(d.Reason) || end.epoch != epoch {
		t.Errorf("fn's context cause: %v (epoch %d), want a DemotedError for %v", end.cause, end.epoch, want)
	}
}

// exactlyOneElectionLeaderAgain waits for a leader and checks that for two
// TTLs no sample finds two, and that one leads at the end. A term may end
// in that time (a renewal that ran late on busy cores ends it, as it must:
// seen once after a restart, under make test's load) and another begin;
// two leaders at once never.
func exactlyOneElectionLeaderAgain(t *testing.T, nodes []*electionNode, ttl time.Duration) (int, int64) {
	t.Helper()
	electionWaitFor(t, 10*time.Second, "a leader after Redis returned", func() bool { return len(electionLeaders(nodes)) > 0 })
	first := electionLeaders(nodes)
	// The epoch of the term seen, read before the watch below: a term that
	// ends as the watch does reads 0 after.
	epoch, _ := nodes[first[0]].e.Epoch()
	lapses := 0
	for start := time.Now(); time.Since(start) < 2*ttl; time.Sleep(2 * time.Millisecond) {
		switch got := electionLeaders(nodes); {
		case len(got) > 1:
			t.Fatalf("leaders %v at once after Redis returned, want one", got)
		case len(got) == 0 || got[0] != first[0]:
			lapses++
		}
	}
	if lapses > 0 {
		t.Logf("node-%d's term ended within two TTLs; %d samples found no leader or another", first[0], lapses)
		electionWaitFor(t, 10*time.Second, "a leader again", func() bool { return len(electionLeaders(nodes)) == 1 })
	}
	return first[0], epoch
}

// electionHandover elects a leader, lets a second node follow, stops the
// leader and returns the time from the stop to the follower's election,
// and both epochs.
func electionHandover(t testing.TB, k kind, s *redistest.Server, name string, ttl, renew time.Duration) (d time.Duration, old, next int64) {
	t.Helper()
	l := startElectionNode(t, electionClient(t, k, s), electionBaseConfig(s, name, "leader", ttl, renew), nil)
	old = l.rec.nth(t, 5*time.Second, "elected", 1).epoch
	f := startElectionNode(t, electionClient(t, k, s), electionBaseConfig(s, name, "follower", ttl, renew), nil)
	f.rec.nth(t, 5*time.Second, "follower", 1)

	stopped := time.Now()
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	won := f.rec.nth(t, ttl, "elected", 1)
	if r := l.rec.nth(t, time.Second, "demoted", 1).reason; r != election.ReasonStopped {
		t.Errorf("old leader demoted for %v, want %v", r, election.ReasonStopped)
	}
	if err := f.stop(); err != nil {
		t.Fatal(err)
	}
	return won.at.Sub(stopped), old, won.epoch
}

// againIfPaused runs round, which returns by how much it missed its bound
// (≤ 0: it did not), at most three times: again only while it missed by
// no more than this process or one of servers was held back meanwhile (a
// timer of the test's own fired that late, or a server answered a PING
// that late: redistest.WatchPauses). A round late only because the
// machine ran nothing on time is tried again; a late primitive still
// fails the caller's assertion.
func againIfPaused(t *testing.T, what string, round func() (miss time.Duration), servers ...*redistest.Server) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		pauses := redistest.WatchPauses(servers...)
		miss := round()
		paused := pauses.Stop()
		if miss <= 0 || paused < miss || attempt == 3 {
			return
		}
		t.Logf("%s missed its bound by %v while the process or a server was held back %v; again", what, miss, paused)
	}
}
