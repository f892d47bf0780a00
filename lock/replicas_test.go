package lock_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

func TestReplicaWaitSucceedsWithAReplicaAttached(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	r := s.StartReplica(t)
	l := newLocker(t, s, lock.WithReplicas(1, time.Second, true))

	lease, err := l.Acquire(context.Background(), "job", 10*time.Second)
	if err != nil {
		t.Fatalf("acquire with a healthy replica: %v", err)
	}
	if lease.Replicas < 1 {
		t.Fatalf("lease.Replicas = %d, want ≥ 1", lease.Replicas)
	}
	// WAIT returned, so the replica has the lock and the counter already.
	rc := r.Client(t)
	if v, err := rc.Get(context.Background(), lockKey(s, "job")).Result(); err != nil || !strings.HasSuffix(v, " "+lease.Owner) {
		t.Fatalf("replica's lock %q, %v; want the value \"<id> %s\"", v, err, lease.Owner)
	}
	if n, err := rc.Get(context.Background(), counterKey(s, "job")).Int64(); err != nil || n != lease.Token {
		t.Fatalf("replica's counter %d, %v; want %d", n, err, lease.Token)
	}
	// A refusal is still a refusal.
	if _, err := l.Acquire(context.Background(), "job", time.Second); !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("second acquire: %v, want ErrHeld", err)
	}
}

func TestReplicaWaitFailsClosedWhenTheReplicaIsFrozen(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	r := s.StartReplica(t)
	const timeout = 200 * time.Millisecond
	closed := newLocker(t, s, lock.WithReplicas(1, timeout, true))
	open := newLocker(t, s, lock.WithReplicas(1, timeout, false))
	ctx := context.Background()

	r.Freeze(t)
	defer r.Thaw(t)
	start := time.Now()
	_, err := closed.Acquire(ctx, "job", 10*time.Second)
	took := time.Since(start)
	t.Logf("frozen replica: fail-closed acquire returned after %v: %v", took, err)
	if !errors.Is(err, lock.ErrNotReplicated) {
		t.Fatalf("acquire with the replica frozen: %v, want ErrNotReplicated", err)
	}
	if took < timeout {
		t.Fatalf("gave up after %v, before the %v WAIT timeout", took, timeout)
	}
	// Failing closed released the lock it could not make durable.
	if h, err := closed.Holder(ctx, "job"); err != nil || h.Held {
		t.Fatalf("holder after failing closed: %+v, %v; want released", h, err)
	}

	// Configured to proceed instead, Acquire returns the lease and says how
	// many replicas acknowledged: none.
	lease, err := open.Acquire(ctx, "job", 10*time.Second)
	if err != nil {
		t.Fatalf("fail-open acquire: %v", err)
	}
	if lease.Replicas != 0 {
		t.Fatalf("lease.Replicas = %d with the replica frozen, want 0", lease.Replicas)
	}
	if h, err := open.Holder(ctx, "job"); err != nil || !h.Held || h.Token != lease.Token {
		t.Fatalf("holder: %+v, %v", h, err)
	}
}

// After SCRIPT FLUSH the pipelined EVALSHA answers NOSCRIPT: the acquire and
// its WAIT must be sent again with the script's source. (WAIT returns at
// the replica's acknowledgement; its 5 s bound is for a busy machine, where
// 1 s once passed without one.)
func TestReplicaWaitAcquireFallsBackToEvalAfterScriptFlush(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	s.StartReplica(t)
	l := newLocker(t, s, lock.WithCounterTokens(), lock.WithReplicas(1, 5*time.Second, true))
	if err := s.Client(t).ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	lease, err := l.Acquire(context.Background(), "job", time.Second)
	if err != nil || lease.Token != 1 || lease.Replicas < 1 {
		t.Fatalf("acquire after SCRIPT FLUSH: %+v, %v; want token 1, acknowledged", lease, err)
	}
}

// WithReplicas returns a lease only after WAIT counted it, and WAIT can
// take longer than the lease's TTL (up to the timeout given to
// WithReplicas). A lease that came back after its own deadline had already
// expired on the server, and another holder could have taken the lock
// meanwhile: two holders, each with a lease. Acquire must return no lease
// then, and must not touch the other holder's lock.
func TestAcquireWhoseReplicaAcknowledgedAfterTheTTLReturnsNoLease(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	r := s.StartReplica(t)
	replicated := newLocker(t, s, lock.WithReplicas(1, 5*time.Second, true))
	plain := newLocker(t, s)
	ctx := context.Background()
	const ttl = 150 * time.Millisecond

	r.Partition(t)
	type result struct {
		lease *lock.Lease
		err   error
	}
	got := make(chan result, 1)
	go func() {
		lease, err := replicated.Acquire(ctx, "job", ttl)
		got <- result{lease, err}
	}()
	// The acquire takes the lock, then waits for the replica.
	waitFor(t, 5*time.Second, "the replicated acquire to take the lock", func() bool {
		h, err := plain.Holder(ctx, "job")
		return err == nil && h.Held
	})
	// The lock expires on the primary while its WAIT waits for the replica;
	// another holder takes it.
	var other *lock.Lease
	waitFor(t, 5*time.Second, "the lock to expire and be taken by another holder", func() bool {
		l, err := plain.Acquire(ctx, "job", 10*time.Second)
		if err == nil {
			other = l
		}
		return err == nil
	})
	r.Heal(t)
	res := <-got
	if res.err == nil {
		t.Fatalf("a lease came back %v after its request, past its deadline (TTL %v), while another holder held the lock: two holders",
			time.Since(res.lease.RequestedAt).Round(time.Millisecond), ttl)
	}
	t.Logf("acquire whose replica acknowledged after the TTL: %v", res.err)
	if !errors.Is(res.err, lock.ErrDeadline) {
		t.Fatalf("acquire: %v, want ErrDeadline", res.err)
	}
	if h, err := plain.Holder(ctx, "job"); err != nil || !h.Held || h.Token != other.Token {
		t.Fatalf("holder %+v, %v; want the other holder's lock untouched (token %d)", h, err, other.Token)
	}
}

// WithReplicas waited for replicas on Acquire only: an Extend was
// acknowledged by the primary alone. An extension the replica never got is
// lost when that replica is promoted: there the lock still expires at the
// acquire's TTL, and a second holder took it while the first counted on
// the deadline Extend gave it (issue 25: one of the paths that escaped the
// WAIT). Here the replica is cut off after the acquire it acknowledged, the
// lease is extended, and the replica promoted: the fail-closed extension
// must be refused, the lease keep its deadline, and the second holder come
// only after it.
func TestWithReplicasExtensionAPromotedReplicaMissedIsNotCountedOn(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	r := s.StartReplica(t)
	const timeout = 200 * time.Millisecond
	l := newLocker(t, s, lock.WithReplicas(1, timeout, true))
	ctx := context.Background()
	const ttl, extended = 500 * time.Millisecond, 30 * time.Second

	start := time.Now()
	lease := acquireAcknowledged(t, l, "job", ttl)
	deadline := lease.Deadline(0)
	r.Partition(t)
	extendErr := l.Extend(ctx, lease, extended)
	r.Promote(t)
	second := newLockerOn(t, r, r.Client(t))
	var other *lock.Lease
	var err error
	waitFor(t, 10*ttl, "the promoted replica to let a second holder in", func() bool {
		other, err = second.Acquire(ctx, "job", extended)
		return err == nil
	})
	secondAt := time.Now()
	t.Logf("extend to %v with the replica cut off: %v; the first holder counts on its lease until %v after the acquire; the promoted replica gave the lock to a second holder %v after it",
		extended, extendErr, lease.Deadline(0).Sub(start).Round(time.Millisecond), secondAt.Sub(start).Round(time.Millisecond))
	if secondAt.Before(lease.Deadline(0)) {
		t.Fatalf("a second holder (token %d) came %v before the first's deadline: two holders", other.Token, lease.Deadline(0).Sub(secondAt).Round(time.Millisecond))
	}
	if !errors.Is(extendErr, lock.ErrNotReplicated) || !lease.Deadline(0).Equal(deadline) {
		t.Fatalf("extend: %v, deadline moved by %v; want ErrNotReplicated and the deadline kept", extendErr, lease.Deadline(0).Sub(deadline))
	}
}

// The Keeper renews through the same extend: under WithReplicas, fail
// closed, a renewal no replica acknowledged is not counted on either, so a
// Keeper whose replica is cut off loses the lease at the deadline of the
// last acknowledged renewal, its renewals meanwhile refused with
// ErrNotReplicated, instead of keeping a lease a failover would end early.
func TestKeeperWithReplicasLosesTheLeaseWhenNoReplicaAcknowledgesItsRenewals(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	r := s.StartReplica(t)
	const ttl, interval, timeout = time.Second, 250 * time.Millisecond, 200 * time.Millisecond
	var refused atomic.Int64 // renewals refused as not replicated
	l := newLocker(t, s, lock.WithReplicas(1, timeout, true), lock.WithHook(func(_ context.Context, e lock.Event) {
		if e.Op == "extend" && errors.Is(e.Err, lock.ErrNotReplicated) {
			refused.Add(1)
		}
	}))
	ctx := context.Background()
	lease := acquireAcknowledged(t, l, "job", ttl)
	k, err := l.Keep(ctx, lease, interval)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	// Renewals go through while the replica acknowledges them.
	waitFor(t, 10*ttl, "a renewal", func() bool { return k.Lease().RequestedAt.After(lease.RequestedAt) })
	r.Partition(t)
	partitioned := time.Now()
	defer r.Heal(t)
	last := k.Deadline() // or one renewal later, if one sent before the cut is acknowledged
	select {
	case <-k.Context().Done():
	case <-time.After(time.Until(last) + ttl):
		t.Fatalf("the Keeper still holds the lease %v after the cut, past the deadline of its last acknowledged renewal", time.Since(partitioned))
	}
	lostAt := time.Now()
	t.Logf("replica cut off: the Keeper lost the lease %v after the cut, %v after the deadline of the last renewal the replica acknowledged, %d renewals refused as not replicated meanwhile: %v",
		lostAt.Sub(partitioned).Round(time.Millisecond), lostAt.Sub(k.Deadline()).Round(time.Millisecond), refused.Load(), k.Err())
	if !errors.Is(k.Err(), lock.ErrLeaseLost) || !errors.Is(k.Err(), lock.ErrDeadline) {
		t.Fatalf("Keeper.Err() = %v, want ErrLeaseLost and ErrDeadline", k.Err())
	}
	if refused.Load() == 0 {
		t.Fatal("no renewal was refused as not replicated: the Keeper did not wait for the replica")
	}
	if sent := k.Lease().RequestedAt; !sent.Before(partitioned) {
		t.Fatalf("the Keeper counted on a renewal sent %v after the replica was cut off", sent.Sub(partitioned))
	}
}

// acquireAcknowledged acquires name with the replica linked, trying again
// while the acquire fails closed: on busy cores the replica can acknowledge
// after a short WAIT timeout.
func acquireAcknowledged(t *testing.T, l *lock.Locker, name string, ttl time.Duration) *lock.Lease {
	t.Helper()
	var lease *lock.Lease
	var err error
	for range 10 {
		lease, err = l.Acquire(context.Background(), name, ttl)
		if !errors.Is(err, lock.ErrNotReplicated) {
			break
		}
	}
	if err != nil || lease.Replicas != 1 {
		t.Fatalf("acquire with the replica acknowledging: %+v, %v", lease, err)
	}
	return lease
}
