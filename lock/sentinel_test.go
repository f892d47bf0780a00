package lock_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// tokenScheme is one way lock issues fencing tokens.
type tokenScheme struct {
	name string
	opts []lock.Option
	// monotonic: a token issued after a failover is above every token
	// issued before it.
	monotonic bool
}

// tokenSchemes returns the token schemes the Sentinel tests run side by side,
// each with its own lock name and keys: the counter alone
// (lock.WithCounterTokens), which a failover can move backwards, and lock's
// default, max(counter+1, the server's clock in µs), which it must not.
func tokenSchemes() []tokenScheme {
	return []tokenScheme{
		{name: "counter-only", opts: []lock.Option{lock.WithCounterTokens()}},
		{name: "hybrid clock", monotonic: true},
	}
}

// acquisition is one lease handed out, with when its acquire was sent and
// when it returned.
type acquisition struct {
	token     int64
	sent, got time.Time
	// deadline is the lease's deadline with a margin of a tenth of the TTL;
	// released is when the holder sent the release, zero when it let the
	// lease expire.
	deadline, released time.Time
}

// until is when the holder stops counting on the lease: when it sent the
// release or at its deadline, whichever came first. A holder that sends
// its release after the deadline has held past its lease on its own; the
// lease promised it nothing then.
func (g acquisition) until() time.Time {
	if !g.released.IsZero() && g.released.Before(g.deadline) {
		return g.released
	}
	return g.deadline
}

// acquirers take one lock name again and again, each on a failover client
// of its own, and record every lease they were given.
type acquirers struct {
	mu   sync.Mutex
	got  []acquisition
	stop func()
}

func startAcquirers(t *testing.T, sen *redistest.Sentinel, opts []lock.Option, prefix string, n int) *acquirers {
	t.Helper()
	a := &acquirers{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range n {
		l, err := lock.New(sen.Client(t), append([]lock.Option{lock.WithPrefix(prefix), lock.WithOwner(fmt.Sprint(i))}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for ctx.Err() == nil {
				ttl := time.Duration(50+rng.IntN(200)) * time.Millisecond
				sent := time.Now()
				actx, cancelCall := context.WithTimeout(ctx, 2*redistest.SentinelDownAfter)
				lease, err := l.Acquire(actx, "job", ttl)
				cancelCall()
				var held *lock.HeldError
				switch {
				case err == nil:
					g := acquisition{token: lease.Token, sent: sent, got: time.Now(), deadline: lease.Deadline(ttl / 10)}
					// Hold for a random part of the lease; then release, or
					// (one in three) let the lease expire. A lease whose
					// WAIT took most of its TTL is released past its
					// deadline.
					release := rng.IntN(3) != 0
					if release {
						pause(ctx, time.Duration(rng.Int64N(int64(ttl/2))))
						g.released = time.Now()
					}
					a.mu.Lock()
					a.got = append(a.got, g)
					a.mu.Unlock()
					if release {
						rctx, cancelCall := context.WithTimeout(ctx, 2*redistest.SentinelDownAfter)
						_, _ = l.Release(rctx, lease)
						cancelCall()
					}
				case errors.As(err, &held):
					pause(ctx, min(held.TTL, 10*time.Millisecond)+time.Millisecond)
				default:
					pause(ctx, 10*time.Millisecond)
				}
			}
		}()
	}
	a.stop = func() { cancel(); wg.Wait() }
	t.Cleanup(a.stop)
	return a
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// count returns how many leases were handed out.
func (a *acquirers) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.got)
}

// reissued counts, among the leases whose acquire was sent at or after
// from, those whose token is not above the token of a lease that had been
// returned before their acquire was sent: a token handed out again, or
// lower than one already handed out. It also returns the highest token
// returned before from and how many leases were counted.
func (a *acquirers) reissued(from time.Time) (reissued int, highestBefore int64, counted int) {
	a.mu.Lock()
	got := slices.Clone(a.got)
	a.mu.Unlock()
	byGot := slices.Clone(got)
	slices.SortFunc(byGot, func(x, y acquisition) int { return x.got.Compare(y.got) })
	slices.SortFunc(got, func(x, y acquisition) int { return x.sent.Compare(y.sent) })
	var highest int64
	j := 0
	for _, y := range got {
		for j < len(byGot) && byGot[j].got.Before(y.sent) {
			highest = max(highest, byGot[j].token)
			j++
		}
		if y.sent.Before(from) {
			highestBefore = highest
			continue
		}
		counted++
		if y.token <= highest {
			reissued++
		}
	}
	return reissued, highestBefore, counted
}

// overlapping counts the leases returned at or after from that began while
// another holder still counted on its own, within that lease's deadline:
// two holders at once. pastDeadline counts those that began only while a
// holder kept a lease past its deadline (it released it later than that):
// the measure before issue 25 counted them too, and they are no overlap.
func (a *acquirers) overlapping(from time.Time) (overlaps, pastDeadline int) {
	a.mu.Lock()
	got := slices.Clone(a.got)
	a.mu.Unlock()
	return countOverlaps(got, from)
}

func countOverlaps(got []acquisition, from time.Time) (overlaps, pastDeadline int) {
	slices.SortFunc(got, func(x, y acquisition) int { return x.got.Compare(y.got) })
	var until, held time.Time // the latest until, and the latest release
	for _, g := range got {
		if !g.got.Before(from) {
			switch {
			case g.got.Before(until):
				overlaps++
			case g.got.Before(held):
				pastDeadline++
			}
		}
		if u := g.until(); u.After(until) {
			until = u
		}
		if g.released.After(held) {
			held = g.released
		}
	}
	return overlaps, pastDeadline
}

// A Sentinel failover promotes a replica that may have missed the last
// acquisitions: with counter-only tokens its counter is behind, and the
// first leases it hands out reissue tokens already given to holders; a
// token scheme that follows the server's clock must issue every lease after
// the failover a token above every lease before it. For each fault: (a)
// SENTINEL FAILOVER, (b) the primary SIGKILLed, (c) the primary frozen past
// down-after-milliseconds and thawed (demoted, losing what it ran since).
//
// WithReplicas(2) (both replicas, fail closed) composes with either scheme:
// no token is reissued, and no lease begins while another holder counts on
// its own within its deadline. About one lease in 50 to 100 after a fault
// did, until Acquire stopped returning a lease whose WAIT outlasted its TTL
// (TestAcquireWhoseReplicaAcknowledgedAfterTheTTLReturnsNoLease); the few
// left after that were a holder that released a lease past its deadline,
// counted by the measure as still held
// (TestOverlapCountIgnoresALeaseItsHolderKeptPastItsDeadline), and are now
// printed apart. A replica that was cut off, or fewer replicas acknowledged
// than could be promoted, and the lock vanishes; then two holders for up to
// one TTL, and only the fence, refusing the older once the newer writes,
// keeps the resource right (package fence's
// TestWithReplicasLeaseVanishesWhenSentinelPromotesAReplicaThatMissedIt).
// These holders never renew; renewals under WithReplicas are pinned by
// TestWithReplicasExtensionAPromotedReplicaMissedIsNotCountedOn.
func TestSentinelFailoverReissuesTokensUnlessTheyFollowTheServerClock(t *testing.T) {
	sen := redistest.StartSentinel(t)
	type variant struct {
		name      string
		monotonic bool
		// replicated: every lease waited for both replicas (WithReplicas,
		// fail closed), so whichever replica is promoted has it.
		replicated bool
		a          *acquirers
	}
	var all []variant
	for i, sc := range tokenSchemes() {
		all = append(all,
			variant{name: sc.name + " tokens", monotonic: sc.monotonic,
				a: startAcquirers(t, sen, sc.opts, fmt.Sprintf("s%d:", i), 4)},
			variant{name: sc.name + " tokens, WithReplicas(2)", monotonic: sc.monotonic, replicated: true,
				a: startAcquirers(t, sen, append([]lock.Option{lock.WithReplicas(2, 100*time.Millisecond, true)}, sc.opts...),
					fmt.Sprintf("s%dr:", i), 4)})
	}
	faults := []struct {
		name string
		do   func(testing.TB) redistest.Failover
	}{
		{"SENTINEL FAILOVER", sen.Failover},
		{"SIGKILL", sen.KillPrimary},
		{"SIGSTOP past down-after", sen.FreezePrimary},
	}
	var replicatedLeases, replicatedOverlaps, replicatedPast int
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			// Leases are being handed out before the fault and after it.
			for _, v := range all {
				n := v.a.count()
				waitFor(t, 10*redistest.SentinelFailoverTimeout, "leases before the fault", func() bool { return v.a.count() >= n+20 })
			}
			from := time.Now()
			fo := f.do(t)
			settled := time.Since(from)
			for _, v := range all {
				// Leases keep coming after the failover: the first ones from
				// the new primary are those that may reuse a token.
				n := v.a.count()
				waitFor(t, 10*redistest.SentinelFailoverTimeout, "leases after the failover", func() bool { return v.a.count() >= n+20 })
				reissued, highest, counted := v.a.reissued(from)
				overlaps, past := v.a.overlapping(from)
				t.Logf("%s, %s: primary moved in %v, settled in %v; highest token before the fault %d; of the %d leases since the fault began, %d reissued a token, %d began while another holder counted on its lease within its deadline, and %d more only while a holder kept its lease past its deadline",
					f.name, v.name, fo.Took.Round(time.Millisecond), settled.Round(time.Millisecond), highest, counted, reissued, overlaps, past)
				if (v.monotonic || v.replicated) && reissued > 0 {
					t.Errorf("%s: %d leases reissued a token", v.name, reissued)
				}
				if v.replicated {
					replicatedLeases += counted
					replicatedOverlaps += overlaps
					replicatedPast += past
				}
			}
		})
	}
	t.Logf("WithReplicas(2): of %d leases since the faults began, %d began while another holder counted on its lease within its deadline; %d more began while a holder kept its lease past its deadline",
		replicatedLeases, replicatedOverlaps, replicatedPast)
	if replicatedOverlaps > 0 {
		t.Errorf("WithReplicas(2): %d of %d leases since the faults began while another holder counted on its lease within its deadline, want 0",
			replicatedOverlaps, replicatedLeases)
	}
}

// The WithReplicas overlaps the Sentinel test used to report (about one
// lease in 200 to 400 after TestAcquireWhoseReplicaAcknowledgedAfterTheTTLReturnsNoLease)
// were not two holders. The sequence, from a run's log (times from the
// first acquire's send): a 73ms lease whose WAIT took 66ms was returned
// past the test's own deadline for it (65.7ms: the TTL less a tenth), and
// its holder, pausing a random part of the TTL before releasing, sent the
// release at 88ms. The lock had expired on the server at 73.3ms (token
// time 0.3ms + TTL) and another holder took it at 77ms: after the first
// lease ended. The measure took the release as the end of the first
// holder's claim, so it counted an overlap. A holder's claim ends at its
// deadline at the latest; a real overlap, one lease returned before
// another's deadline, is still counted.
func TestOverlapCountIgnoresALeaseItsHolderKeptPastItsDeadline(t *testing.T) {
	t0 := time.Now()
	at := func(us int) time.Time { return t0.Add(time.Duration(us) * time.Microsecond) }
	past := []acquisition{
		{token: 1, sent: at(0), got: at(66_077), deadline: at(65_736), released: at(87_918)},
		{token: 2, sent: at(77_284), got: at(78_177), deadline: at(77_300 + 203_400), released: at(110_000)},
	}
	overlaps, pastDeadline := countOverlaps(past, t0)
	t.Logf("a lease released past its deadline, the next one taken after it expired: %d overlaps, %d after a lease kept past its deadline", overlaps, pastDeadline)
	if overlaps != 0 || pastDeadline != 1 {
		t.Errorf("counted %d overlaps and %d after a lease kept past its deadline, want 0 and 1", overlaps, pastDeadline)
	}
	real := []acquisition{
		{token: 1, sent: at(0), got: at(1_000), deadline: at(90_000)},                                 // left to expire
		{token: 2, sent: at(40_000), got: at(50_000), deadline: at(130_000)},                          // within the first's deadline
		{token: 3, sent: at(140_000), got: at(141_000), deadline: at(200_000), released: at(150_000)}, // after both
		{token: 4, sent: at(145_000), got: at(146_000), deadline: at(220_000)},                        // before the third's release
	}
	overlaps, pastDeadline = countOverlaps(real, t0)
	if overlaps != 2 || pastDeadline != 0 {
		t.Errorf("counted %d overlaps and %d after a lease kept past its deadline, want 2 (the second and fourth leases) and 0", overlaps, pastDeadline)
	}
}
