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
	// until is when the holder stops counting on the lease: when it sent
	// the release, or its deadline with a margin of a tenth of the TTL.
	until time.Time
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
					g := acquisition{token: lease.Token, sent: sent, got: time.Now(), until: lease.Deadline(ttl / 10)}
					// Hold for a random part of the lease; then release, or
					// (one in three) let the lease expire.
					release := rng.IntN(3) != 0
					if release {
						pause(ctx, time.Duration(rng.Int64N(int64(ttl/2))))
						g.until = time.Now()
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
// another holder still counted on its own: two holders at once.
func (a *acquirers) overlapping(from time.Time) int {
	a.mu.Lock()
	got := slices.Clone(a.got)
	a.mu.Unlock()
	slices.SortFunc(got, func(x, y acquisition) int { return x.got.Compare(y.got) })
	var until time.Time
	n := 0
	for _, g := range got {
		if !g.got.Before(from) && g.got.Before(until) {
			n++
		}
		if g.until.After(until) {
			until = g.until
		}
	}
	return n
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
// no token is reissued. It narrows the window of two holders and does not
// close it. About one lease in 50 to 100 after a fault began while another
// holder counted on its lease, until Acquire stopped returning a lease whose
// WAIT outlasted its TTL (TestAcquireWhoseReplicaAcknowledgedAfterTheTTLReturnsNoLease);
// measured since, 2 of 825 in two runs, and at most 1% is asserted over the
// WithReplicas variants of the three faults. A replica that was cut off, or fewer
// replicas acknowledged than could be promoted, and the lock vanishes; then
// two holders for up to one TTL, and only the fence, refusing the older once
// the newer writes, keeps the resource right (package fence's
// TestWithReplicasLeaseVanishesWhenSentinelPromotesAReplicaThatMissedIt).
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
	var replicatedLeases, replicatedOverlaps int
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
				overlaps := v.a.overlapping(from)
				t.Logf("%s, %s: primary moved in %v, settled in %v; highest token before the fault %d; of the %d leases since the fault began, %d reissued a token and %d began while another holder counted on its lease",
					f.name, v.name, fo.Took.Round(time.Millisecond), settled.Round(time.Millisecond), highest, counted, reissued, overlaps)
				if (v.monotonic || v.replicated) && reissued > 0 {
					t.Errorf("%s: %d leases reissued a token", v.name, reissued)
				}
				if v.replicated {
					replicatedLeases += counted
					replicatedOverlaps += overlaps
				}
			}
		})
	}
	t.Logf("WithReplicas(2): %d of %d leases since the faults began while another holder counted on its lease", replicatedOverlaps, replicatedLeases)
	if replicatedOverlaps*100 > replicatedLeases {
		t.Errorf("WithReplicas(2): %d of %d leases since the faults began while another holder counted on its lease, above 1%%", replicatedOverlaps, replicatedLeases)
	}
}
