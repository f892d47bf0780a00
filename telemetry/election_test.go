package telemetry_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// A node that wins and resigns is counted elected and demoted (resigned),
// its term is recorded and election.leader goes back to 0; a node that
// finds it leading is counted follower.
func TestElectionElectedDemotedAndFollowerAreCounted(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	newNode := func(id string) *election.Elector {
		e, err := election.New(goredisadapter.New(s.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled = true })), election.Config{
			Name: "reports", NodeID: id, Prefix: s.Prefix(), TTL: time.Second,
			Hook: o.Election,
		})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	a, b := newNode("a"), newNode("b")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	elected := make(chan struct{})
	resign := make(chan struct{})
	done := make(chan error, 1)
	var once sync.Once
	go func() {
		done <- a.Run(ctx, func(ctx context.Context, _ election.Term) error {
			first := false
			once.Do(func() { close(elected); first = true })
			if first {
				<-resign
				return nil
			}
			<-ctx.Done()
			return nil
		})
	}()
	<-elected
	followed := make(chan error, 1)
	bctx, bcancel := context.WithCancel(ctx)
	go func() {
		followed <- b.Run(bctx, func(ctx context.Context, _ election.Term) error { <-ctx.Done(); return nil })
	}()

	name := attribute.Key("election.name").String("reports")
	tr := attribute.Key("election.transition")
	waitUntil(t, 5*time.Second, "b counted as follower", func() bool {
		return o.value(t, "election.transitions", name, tr.String("follower")) == 1
	})
	if got := o.value(t, "election.leader", name); got != 1 {
		t.Errorf("election.leader = %d while a leads, want 1", got)
	}
	bcancel()
	<-followed
	reason := attribute.Key("election.demotion.reason").String("resigned")
	close(resign)
	waitUntil(t, 5*time.Second, "a counted demoted, resigned", func() bool {
		return o.value(t, "election.transitions", name, tr.String("demoted"), reason) == 1
	})
	cancel() // a may have been elected again meanwhile: that term ends stopped
	<-done

	if got := o.value(t, "election.transitions", name, tr.String("elected")); got < 1 {
		t.Errorf("elected = %d, want ≥ 1", got)
	}
	if got := o.value(t, "election.transitions", name, tr.String("demoted"), reason); got != 1 {
		t.Errorf("demoted{resigned} = %d, want 1", got)
	}
	if got := o.value(t, "election.term.duration", name, reason); got != 1 {
		t.Errorf("election.term.duration{resigned} count %d, want 1", got)
	}
	if got := o.value(t, "election.leader", name); got != 0 {
		t.Errorf("election.leader = %d after the terms, want 0", got)
	}
}

func waitUntil(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A node that never leads used to count one follower transition and then
// nothing while leadership moved between two others; leader_changed counts
// each term it sees, within one RetryInterval (its check's period) and a
// round trip.
func TestElectionLeaderChangeBetweenOtherNodesIsCountedByANodeThatNeverLed(t *testing.T) {
	s := redistest.Start(t)
	const ttl, retry = time.Second, 200 * time.Millisecond
	type node struct {
		o    *sdk
		e    *election.Elector
		stop func()
	}
	start := func(id string) *node {
		n := &node{o: newOtel(t)}
		var err error
		n.e, err = election.New(goredisadapter.New(s.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled = true })), election.Config{
			Name: "handover", NodeID: id, Prefix: s.Prefix(), TTL: ttl, RenewInterval: retry, RetryInterval: retry,
			Hook: n.o.Election,
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- n.e.Run(ctx, func(ctx context.Context, _ election.Term) error { <-ctx.Done(); return nil })
		}()
		n.stop = func() { cancel(); <-done }
		t.Cleanup(n.stop)
		return n
	}
	name := attribute.Key("election.name").String("handover")
	tr := attribute.Key("election.transition")
	count := func(n *node, transition string) int64 {
		return n.o.value(t, "election.transitions", name, tr.String(transition))
	}

	a := start("a")
	waitUntil(t, 5*time.Second, "a elected", func() bool { return count(a, "elected") == 1 })
	b, c := start("b"), start("c")
	for _, n := range []*node{b, c} {
		waitUntil(t, 5*time.Second, n.e.NodeID()+" sees a's term", func() bool { return count(n, "leader_changed") == 1 })
	}
	if err := a.e.Resign(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Resign releases the lease and a sits out a RetryInterval: b or c wins,
	// and the other never led.
	waitUntil(t, ttl, "b or c elected", func() bool { return count(b, "elected")+count(c, "elected") > 0 })
	winner, other := b, c
	if count(c, "elected") > 0 {
		winner, other = c, b
	}
	waitUntil(t, retry+retry, other.e.NodeID()+" counts the winner's term", func() bool {
		return count(other, "leader_changed") == 2
	})
	if n := count(other, "elected"); n != 0 {
		t.Fatalf("%s elected %d times; the test needs a node that never led", other.e.NodeID(), n)
	}
	if n := count(other, "follower"); n != 1 {
		t.Errorf("%s: follower = %d in one follower stretch, want 1", other.e.NodeID(), n)
	}
	// The winner's own term is a leader change too, seen before its election.
	if n := count(winner, "leader_changed"); n != 2 {
		t.Errorf("%s: leader_changed = %d (a's term, then its own), want 2", winner.e.NodeID(), n)
	}
	if got := winner.o.value(t, "election.leader", name); got != 1 {
		t.Errorf("%s: election.leader = %d while it leads, want 1", winner.e.NodeID(), got)
	}
}

// Election records each renewal, its latency and its span, and the epoch
// of the term, beside the transitions. A leader that renews several times
// shows them all; with the transitions alone, a node renewing ever more
// slowly looked the same as a healthy one.
func TestElectionRecordsRenewalsTheirSpansAndTheEpoch(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	const ttl, renew = 600 * time.Millisecond, 50 * time.Millisecond
	e, err := election.New(goredisadapter.New(s.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled = true })), election.Config{
		Name: "renewing", NodeID: "a", Prefix: s.Prefix(), TTL: ttl, RenewInterval: renew,
		Hook: o.Election,
	})
	if err != nil {
		t.Fatal(err)
	}
	name := attribute.Key("election.name").String("renewing")
	ok := attribute.Key("election.outcome").String("ok")
	var epoch int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err = e.Run(ctx, func(_ context.Context, term election.Term) error {
		epoch = term.Epoch
		waitUntil(t, 20*renew, "three renewals counted", func() bool {
			return o.value(t, "election.renewals", name, ok) >= 3
		})
		cancel() // Run returns once the term has ended
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	renewals := o.value(t, "election.renewals", name, ok)
	if got := o.value(t, "election.renewal.duration", name, ok); got != renewals {
		t.Fatalf("election.renewal.duration count %d, renewals %d", got, renewals)
	}
	if got := o.value(t, "election.attempts", name, attribute.Key("election.outcome").String("elected")); got != 1 {
		t.Fatalf("election.attempts{elected} = %d, want 1", got)
	}
	if got := o.value(t, "election.epoch", name); got != epoch {
		t.Fatalf("election.epoch = %d, want the term's %d", got, epoch)
	}
	spans := o.spanNamed("election.renew")
	if int64(len(spans)) != renewals {
		t.Fatalf("%d election.renew spans for %d renewals", len(spans), renewals)
	}
	for _, sp := range spans {
		if d := sp.EndTime.Sub(sp.StartTime); d <= 0 {
			t.Fatalf("election.renew span of length %v", d)
		}
		if v, _ := attr(sp, attribute.Key("election.epoch")); v.AsInt64() != epoch {
			t.Fatalf("election.renew span epoch %v, want %d", v, epoch)
		}
	}
	if got := o.value(t, "election.transitions", name, attribute.Key("election.transition").String("elected")); got != 1 {
		t.Fatalf("election.transitions{elected} = %d, want 1", got)
	}
	t.Logf("%d renewals, each a span; epoch %d", renewals, epoch)
}
