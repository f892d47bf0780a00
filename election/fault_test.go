package election_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/internal/redistest"
)

// term is what a leader's fn saw of its term's end.
type termEnd struct {
	epoch int64
	at    time.Time
	cause error
}

// watchingFn returns an fn that reports when, and why, its context ended.
func watchingFn(ends chan<- termEnd) func(context.Context, election.Term) error {
	return func(ctx context.Context, term election.Term) error {
		<-ctx.Done()
		ends <- termEnd{term.Epoch, time.Now(), context.Cause(ctx)}
		return nil
	}
}

// faultNodes starts three nodes on a server of the test's own and returns
// them, the leader's index and each node's fn reports.
func faultNodes(t *testing.T, s *redistest.Server, name string, ttl, renew time.Duration) ([]*node, int, []chan termEnd) {
	t.Helper()
	var nodes []*node
	var ends []chan termEnd
	for i := range 3 {
		ch := make(chan termEnd, 16)
		ends = append(ends, ch)
		nodes = append(nodes, startNode(t, client(t, s), baseConfig(s, name, fmt.Sprintf("node-%d", i), ttl, renew), watchingFn(ch)))
	}
	waitFor(t, 5*time.Second, "a leader", func() bool { return len(leaders(nodes)) == 1 })
	return nodes, leaders(nodes)[0], ends
}

// checkStepDown checks that the leader stepped down no later than its local
// deadline after a fault at faultAt, for the reason want, with fn's context
// cancelled and its cause saying why.
func checkStepDown(t *testing.T, n *node, ends chan termEnd, faultAt time.Time, ttl, renew time.Duration, want election.Reason) {
	t.Helper()
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
		dem.epoch, ms(after), ttl, renew, dem.reason, ms(end.at.Sub(faultAt)), end.cause)
	if dem.reason != want || dem.epoch != epoch {
		t.Errorf("demoted epoch %d for %v, want epoch %d for %v", dem.epoch, dem.reason, epoch, want)
	}
	// It rode the failed renewals out: its last good renewal can be up to
	// one interval (and a round trip) older than the fault, no more.
	if after < ttl-renew-margin-5*time.Millisecond {
		t.Errorf("stepped down %v after the fault, before the deadline could have passed (≥ %v)", after, ttl-renew-margin)
	}
	var d *election.DemotedError
	if !errors.As(end.cause, &d) || d.Reason != want || end.epoch != epoch {
		t.Errorf("fn's context cause: %v (epoch %d), want a DemotedError for %v", end.cause, end.epoch, want)
	}
}

// exactlyOneLeaderAgain waits for a leader and checks that for two TTLs
// every sample finds exactly one, the same.
func exactlyOneLeaderAgain(t *testing.T, nodes []*node, ttl time.Duration) (int, int64) {
	t.Helper()
	waitFor(t, 10*time.Second, "a leader after Redis returned", func() bool { return len(leaders(nodes)) > 0 })
	first := leaders(nodes)
	for start := time.Now(); time.Since(start) < 2*ttl; time.Sleep(2 * time.Millisecond) {
		if got := leaders(nodes); len(got) != 1 || got[0] != first[0] {
			t.Fatalf("leaders %v after Redis returned, want exactly one, node %v", got, first)
		}
	}
	epoch, _ := nodes[first[0]].e.Epoch()
	return first[0], epoch
}

// A frozen Redis answers nothing. The leader keeps retrying its renewal
// until the local deadline and steps down there, as unreachable, with fn's
// context cancelled; the followers' attempts hang too. Thawed, Redis has
// expired the lease by its own clock, and one node is elected.
func TestLeaderStepsDownByItsLocalDeadlineWhenRedisFreezesAndOneLeadsAfterThaw(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	const ttl, renew = 600 * time.Millisecond, 150 * time.Millisecond
	nodes, l, ends := faultNodes(t, s, "freeze", ttl, renew)
	old, _ := nodes[l].e.Epoch()

	frozen := time.Now()
	s.Freeze(t)
	checkStepDown(t, nodes[l], ends[l], frozen, ttl, renew, election.ReasonUnreachable)
	if got := leaders(nodes); len(got) != 0 {
		t.Errorf("leaders while Redis is frozen: %v", got)
	}
	s.Thaw(t)
	leader, epoch := exactlyOneLeaderAgain(t, nodes, ttl)
	if epoch <= old {
		t.Errorf("epoch after thaw %d, not above %d", epoch, old)
	}
	t.Logf("after thaw node-%d leads with epoch %d (was node-%d, epoch %d)", leader, epoch, l, old)
}

// A killed Redis refuses connections. The leader's renewals fail at once,
// again and again; it rides them out until the local deadline and no
// longer. Restarted, the server is empty: one node is elected again, with
// an epoch above the old one although the counter was lost (lock's tokens
// follow the server's clock, not only the counter).
func TestLeaderStepsDownByItsLocalDeadlineWhenRedisIsKilledAndOneLeadsAfterRestartWithAHigherEpoch(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	const ttl, renew = 600 * time.Millisecond, 150 * time.Millisecond
	nodes, l, ends := faultNodes(t, s, "kill", ttl, renew)
	old, _ := nodes[l].e.Epoch()

	killed := time.Now()
	s.Kill(t)
	checkStepDown(t, nodes[l], ends[l], killed, ttl, renew, election.ReasonUnreachable)
	if got := leaders(nodes); len(got) != 0 {
		t.Errorf("leaders while Redis is down: %v", got)
	}
	s.Restart(t)
	leader, epoch := exactlyOneLeaderAgain(t, nodes, ttl)
	t.Logf("after restart node-%d leads with epoch %d (was node-%d, epoch %d)", leader, epoch, l, old)
	if epoch <= old {
		for i, n := range nodes {
			for _, e := range n.rec.all() {
				t.Logf("node-%d %s %+v", i, e.at.Format("15:04:05.000"), e)
			}
		}
		t.Errorf("epoch after a restart without persistence: %d, not above %d: the new leader's writes would be refused", epoch, old)
	}
}
