package election_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/internal/redistest"
)

// handover elects a leader, lets a second node follow, stops the leader and
// returns the time from the stop to the follower's election, and both
// epochs (BenchmarkHandover; internal/clienttest's
// TestElectionCleanHandoverOnStopTakesFarLessThanTheTTL has its own copy).
func handover(t testing.TB, s *redistest.Server, name string, ttl, renew time.Duration) (d time.Duration, old, next int64) {
	t.Helper()
	l := startNode(t, client(t, s), baseConfig(s, name, "leader", ttl, renew), nil)
	old = l.rec.nth(t, 5*time.Second, "elected", 1).epoch
	f := startNode(t, client(t, s), baseConfig(s, name, "follower", ttl, renew), nil)
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

type failoverResult struct {
	fromStall   time.Duration // stall -> follower elected
	pastExpiry  time.Duration // lease expiry on the server -> follower elected
	oldLeading  bool          // the stalled leader's IsLeader when the follower was elected
	oldReason   election.Reason
	demotedGap  time.Duration // old leader's demotion -> new leader's election
	old, next   int64
	expiryKnown bool
}

// failover elects a leader whose connection goes through a relay, lets a
// second node follow, waits phase, then stalls the relay: the leader's
// process runs on but none of its renewals reach Redis, and it does not
// release. It returns when the follower is elected.
func failover(t testing.TB, s *redistest.Server, name string, ttl, renew, phase time.Duration) failoverResult {
	t.Helper()
	p := redistest.StartRelay(t, s.Addr())
	lc := client(t, s, func(o *redis.Options) { o.Addr = p.Addr() })
	l := startNode(t, lc, baseConfig(s, name, "leader", ttl, renew), nil)
	var r failoverResult
	r.old = l.rec.nth(t, 5*time.Second, "elected", 1).epoch

	var oldLeading atomic.Bool
	f := startNode(t, client(t, s), baseConfig(s, name, "follower", ttl, renew), func(ctx context.Context, term election.Term) error {
		oldLeading.Store(l.e.IsLeader())
		<-ctx.Done()
		return nil
	})
	f.rec.nth(t, 5*time.Second, "follower", 1)
	time.Sleep(phase) // where the stall falls between two renewals

	stalled := time.Now()
	p.Stall()
	var expiry time.Time
	if h, err := f.e.Leader(context.Background()); err == nil && h.Epoch == r.old {
		r.expiryKnown = true
		expiry = time.Now().Add(h.TTL)
	}
	won := f.rec.nth(t, 2*ttl, "elected", 1)
	r.pastExpiry = won.at.Sub(expiry)
	r.next = won.epoch
	r.fromStall = won.at.Sub(stalled)
	r.oldLeading = oldLeading.Load()
	dem := l.rec.nth(t, 2*ttl, "demoted", 1)
	r.oldReason = dem.reason
	r.demotedGap = won.at.Sub(dem.at)

	p.Close() // lets the stalled node's calls fail at once, so it stops fast
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	if err := f.stop(); err != nil {
		t.Fatal(err)
	}
	return r
}

// A leader that stops renewing without releasing is replaced when its lease
// expires: no sooner than TTL - renew interval after the stall (its last
// renewal can be that old), and within a few milliseconds of the expiry,
// because the follower sleeps until the refusal said the lease would end.
// The stalled leader's process runs throughout, so it steps down at its
// local deadline, before the lease expires on the server: it no longer
// claims to lead when its successor is elected.
func TestFailoverWhenLeaderStopsRenewingTakesBetweenTTLMinusRenewAndTTL(t *testing.T) {
	s := redistest.Start(t)
	const ttl, renew = 300 * time.Millisecond, 100 * time.Millisecond
	const slack = 60 * time.Millisecond
	var fromStall, pastExpiry []time.Duration
	for i := range 7 {
		phase := time.Duration(i) * renew / 7
		r := failover(t, s, fmt.Sprintf("failover-%d", i), ttl, renew, phase)
		if r.fromStall < ttl-renew-5*time.Millisecond || r.fromStall > ttl+slack {
			t.Errorf("round %d: failover took %v, want between TTL-renew (%v) and TTL+%v (%v)", i, r.fromStall, ttl-renew, slack, ttl+slack)
		}
		if !r.expiryKnown {
			t.Errorf("round %d: could not read the stalled lease's TTL", i)
		} else if r.pastExpiry < -2*time.Millisecond || r.pastExpiry > slack {
			t.Errorf("round %d: follower elected %v after the lease's expiry, want within [0, %v]", i, r.pastExpiry, slack)
		}
		if r.next <= r.old {
			t.Errorf("round %d: new epoch %d not above %d", i, r.next, r.old)
		}
		if r.oldLeading {
			t.Errorf("round %d: the stalled leader still reported IsLeader when its successor was elected", i)
		}
		if r.oldReason != election.ReasonUnreachable {
			t.Errorf("round %d: stalled leader demoted for %v, want %v", i, r.oldReason, election.ReasonUnreachable)
		}
		t.Logf("round %d: failover took %.1fms after the stall (TTL %v, renew %v), %.2fms after the lease's expiry; old leader demoted (%v) %.1fms before",
			i, ms(r.fromStall), ttl, renew, ms(r.pastExpiry), r.oldReason, ms(r.demotedGap))
		fromStall = append(fromStall, r.fromStall)
		pastExpiry = append(pastExpiry, r.pastExpiry)
	}
	med, lo, hi := stats(fromStall)
	t.Logf("failover from stall over %d rounds: median %.1fms, min %.1fms, max %.1fms (bounds %v..%v)", len(fromStall), ms(med), ms(lo), ms(hi), ttl-renew, ttl+slack)
	med, lo, hi = stats(pastExpiry)
	t.Logf("failover past the lease's expiry: median %.2fms, min %.2fms, max %.2fms", ms(med), ms(lo), ms(hi))
}
