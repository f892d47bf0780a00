package election_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

const changeTTL, changeRenew = time.Second, 200 * time.Millisecond

// "follower" is reported once per stretch as a follower, so a node that never
// leads used to learn nothing when leadership moved between two others.
// "leader_change" tells it, within one RetryInterval (its check's period)
// and a round trip.
func TestLeaderMovingBetweenOtherNodesIsSeenByANodeThatNeverLed(t *testing.T) {
	s := redistest.Start(t)
	a := startNode(t, client(t, s), baseConfig(s, "change", "a", changeTTL, changeRenew), nil)
	first := a.rec.nth(t, 5*time.Second, "elected", 1)
	b := startNode(t, client(t, s), baseConfig(s, "change", "b", changeTTL, changeRenew), nil)
	c := startNode(t, client(t, s), baseConfig(s, "change", "c", changeTTL, changeRenew), nil)
	for _, n := range []*node{b, c} {
		if l := n.rec.nth(t, 5*time.Second, "leader", 1); l.leader.NodeID != "a" || l.epoch != first.epoch {
			t.Fatalf("first leader seen: %s epoch %d, want a epoch %d", l.leader.NodeID, l.epoch, first.epoch)
		}
	}
	if err := a.e.Resign(context.Background()); err != nil {
		t.Fatal(err)
	}
	// a sits out a RetryInterval; b or c wins, and the other never led.
	winner, other := b, c
	waitFor(t, changeTTL, "b or c elected", func() bool { return b.rec.count("elected")+c.rec.count("elected") > 0 })
	if c.rec.count("elected") > 0 {
		winner, other = c, b
	}
	won := winner.rec.nth(t, time.Second, "elected", 1)
	seen := other.rec.nth(t, 5*time.Second, "leader", 2)
	if seen.epoch != won.epoch || seen.leader.NodeID != winner.e.NodeID() {
		t.Fatalf("%s saw %s epoch %d, want %s epoch %d", other.e.NodeID(), seen.leader.NodeID, seen.epoch, winner.e.NodeID(), won.epoch)
	}
	if n := other.rec.count("elected"); n != 0 {
		t.Fatalf("%s led %d times; the test needs a node that never led", other.e.NodeID(), n)
	}
	late := seen.at.Sub(won.at)
	t.Logf("%s saw %s's term %v after its election (RetryInterval %v)", other.e.NodeID(), winner.e.NodeID(), late, changeRenew)
	if bound := changeRenew + changeRenew; late > bound {
		t.Errorf("leader change seen %v after it happened, want within RetryInterval + %v for the check's round trip (%v)", late, changeRenew, bound)
	}
	if n := other.rec.count("follower"); n != 1 {
		t.Errorf("follower reported %d times in one follower stretch, want 1", n)
	}
	// The winner's own term reaches its Hook as "leader_change" too, before "elected".
	var kinds []string
	for _, e := range winner.rec.all() {
		if e.epoch == won.epoch && (e.kind == "leader" || e.kind == "elected") {
			kinds = append(kinds, e.kind)
		}
	}
	if len(kinds) != 2 || kinds[0] != "leader" || kinds[1] != "elected" {
		t.Errorf("winner's events for its own term: %q, want [leader elected]", kinds)
	}
}

// Resign ends the term from outside fn: fn's context is cancelled with
// ReasonResigned, the lease is released before Resign returns, and the
// follower, woken by the release, is elected long before the lease would
// have expired. Resign without a term says so.
func TestResignReleasesAtOnceAndAFollowerTakesOverWithoutWaitingForTheTTL(t *testing.T) {
	s := redistest.Start(t)
	causes := make(chan error, 2)
	a := startNode(t, client(t, s), baseConfig(s, "resign", "a", changeTTL, changeRenew), func(ctx context.Context, term election.Term) error {
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return errors.New("taken for the cancellation, dropped")
	})
	a.rec.nth(t, 5*time.Second, "elected", 1)
	b := startNode(t, client(t, s), baseConfig(s, "resign", "b", changeTTL, changeRenew), nil)
	b.rec.nth(t, 5*time.Second, "follower", 1)

	resigned := time.Now()
	if err := a.e.Resign(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a.e.IsLeader() {
		t.Error("IsLeader true after Resign returned")
	}
	var de *election.DemotedError
	if cause := <-causes; !errors.As(cause, &de) || de.Reason != election.ReasonResigned {
		t.Errorf("fn's context cause: %v, want ReasonResigned", cause)
	}
	if d := a.rec.nth(t, time.Second, "demoted", 1); d.reason != election.ReasonResigned {
		t.Errorf("demoted for %v, want %v", d.reason, election.ReasonResigned)
	}
	won := b.rec.nth(t, changeTTL, "elected", 1)
	took := won.at.Sub(resigned)
	t.Logf("handover by Resign: %v (TTL %v)", took, changeTTL)
	if took >= changeTTL-changeRenew {
		t.Errorf("follower elected %v after Resign, want well before the lease's TTL %v: the lease was not released", took, changeTTL)
	}
	if err := a.e.Resign(context.Background()); !errors.Is(err, election.ErrNotLeading) {
		t.Errorf("Resign of a follower: %v, want ErrNotLeading", err)
	}
	select {
	case err := <-a.done:
		t.Fatalf("Run returned %v after Resign; it should contend again", err)
	default:
	}
}

// A leader publishes a value (its address); followers, and an Elector that
// never runs, read it through Leader, "follower" and "leader_change".
func TestLeaderValueIsReadByFollowersThroughLeader(t *testing.T) {
	s := redistest.Start(t)
	cfg := baseConfig(s, "value", "a", changeTTL, changeRenew)
	cfg.Value = "10.0.0.7:8443"
	a := startNode(t, client(t, s), cfg, nil)
	a.rec.nth(t, 5*time.Second, "elected", 1)
	b := startNode(t, client(t, s), baseConfig(s, "value", "b", changeTTL, changeRenew), nil)
	if f := b.rec.nth(t, 5*time.Second, "follower", 1); f.leader.Value != cfg.Value || f.leader.NodeID != "a" {
		t.Errorf("follower: %+v, want node a with value %q", f.leader, cfg.Value)
	}
	if l := b.rec.nth(t, 5*time.Second, "leader", 1); l.leader.Value != cfg.Value {
		t.Errorf("leader_change: %+v, want value %q", l.leader, cfg.Value)
	}
	watcher, err := election.New(goredisadapter.New(client(t, s)), baseConfig(s, "value", "watcher", changeTTL, changeRenew))
	if err != nil {
		t.Fatal(err)
	}
	info, err := watcher.Leader(context.Background())
	if err != nil || info.NodeID != "a" || info.Value != cfg.Value {
		t.Fatalf("Leader: %+v, %v; want node a with value %q", info, err, cfg.Value)
	}
	bad := baseConfig(s, "value", "a\nb", changeTTL, changeRenew)
	if _, err := election.New(goredisadapter.New(client(t, s)), bad); !errors.Is(err, election.ErrInvalidConfig) {
		t.Errorf("NodeID with a newline: %v, want ErrInvalidConfig", err)
	}
}

// The "demoted" Event says how long the term lasted: from the election to its end on
// this node's clock.
func TestHookReportsEachTermsLength(t *testing.T) {
	s := redistest.Start(t)
	const lead = 300 * time.Millisecond
	started := time.Now() // no term of a's can begin earlier
	a := startNode(t, client(t, s), baseConfig(s, "length", "a", changeTTL, changeRenew), func(ctx context.Context, _ election.Term) error {
		select {
		case <-time.After(lead):
		case <-ctx.Done():
		}
		return nil
	})
	el := a.rec.nth(t, 5*time.Second, "elected", 1)
	d := a.rec.nth(t, 5*time.Second, "demoted", 1)
	t.Logf("term length %v; between the callbacks %v; fn led %v", d.held, d.at.Sub(el.at), lead)
	if most := d.at.Sub(started); d.held < lead || d.held > most {
		t.Errorf("term length %v, want at least fn's %v and at most the %v from the node's start to its demotion", d.held, lead, most)
	}
}
