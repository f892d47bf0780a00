package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

func TestKeeperStopsWithItsParentContextWithoutCallingItLost(t *testing.T) {
	s := redistest.Start(t)
	l := newLocker(t, s)
	lease := mustAcquire(t, l, "job", 300*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	k, err := l.Keep(ctx, lease, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	<-k.Context().Done()
	if err := k.Stop(); err != nil {
		t.Fatalf("stop after the parent ended: %v, want nil (the lease was not lost)", err)
	}
	// Keep never releases: the lock is still there until Release or expiry.
	if h, err := l.Holder(context.Background(), "job"); err != nil || !h.Held {
		t.Fatalf("holder after Stop: %+v, %v", h, err)
	}
}

func TestKeepRejectsARenewIntervalThatCannotBeatTheDeadline(t *testing.T) {
	s := redistest.Start(t)
	l := newLocker(t, s, lock.WithSafetyMargin(50*time.Millisecond))
	lease := mustAcquire(t, l, "job", 300*time.Millisecond)
	for _, interval := range []time.Duration{0, -time.Millisecond, 250 * time.Millisecond, time.Second} {
		if _, err := l.Keep(context.Background(), lease, interval); !errors.Is(err, lock.ErrInvalidTTL) {
			t.Errorf("interval %v: %v, want ErrInvalidTTL", interval, err)
		}
	}
	if _, err := l.Keep(context.Background(), nil, time.Millisecond); !errors.Is(err, lock.ErrInvalidLease) {
		t.Errorf("nil lease: %v", err)
	}
}

// An acquire can return with little of its lease left: the client sends a
// call again while the server comes back up, and the deadline counts from
// the first send. A Keeper that waited a whole interval for its first renewal
// would let such a lease lapse under a holder that runs normally.
func TestKeeperRenewsALeaseThatArrivesNearItsDeadlineBeforeItLapses(t *testing.T) {
	s := redistest.Start(t)
	l := newLocker(t, s)
	const ttl, interval = 300 * time.Millisecond, 100 * time.Millisecond
	lease := mustAcquire(t, l, "job", ttl)
	// Age the lease as a slow acquire would: 240ms of its 300ms gone, so the
	// local deadline (minus the default margin of ttl/100+2ms) is ~55ms away,
	// less than one renew interval.
	lease.RequestedAt = lease.RequestedAt.Add(-240 * time.Millisecond)
	k, err := l.Keep(context.Background(), lease, interval)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	time.Sleep(2 * ttl)
	if err := k.Context().Err(); err != nil {
		t.Fatalf("a running holder lost a lease that arrived %v before its deadline: %v",
			time.Until(lease.Deadline(0)), context.Cause(k.Context()))
	}
}

// A lease whose deadline passed before Keep (the acquire returned later
// than its TTL) is renewed before anyone acts on it, and Keep refuses a
// lease that a renewal finds gone instead of handing out a live context.
func TestKeepProvesALateLeaseFirstAndRefusesOneThatIsGone(t *testing.T) {
	s := redistest.Start(t)
	l := newLocker(t, s)
	const ttl, interval = 300 * time.Millisecond, 100 * time.Millisecond
	late := mustAcquire(t, l, "late", ttl)
	late.RequestedAt = late.RequestedAt.Add(-time.Second) // deadline long past
	k, err := l.Keep(context.Background(), late, interval)
	if err != nil {
		t.Fatalf("keep a late lease the server still holds: %v", err)
	}
	if left := time.Until(k.Deadline()); left < ttl/2 {
		t.Fatalf("after Keep the deadline is %v away; the proving renewal should have moved it ~%v out", left, ttl)
	}
	_ = k.Stop()

	gone := mustAcquire(t, l, "gone", ttl)
	if err := client(t, s).Del(context.Background(), lockKey(s, "gone")).Err(); err != nil {
		t.Fatal(err)
	}
	gone.RequestedAt = gone.RequestedAt.Add(-time.Second)
	if k, err := l.Keep(context.Background(), gone, interval); !errors.Is(err, lock.ErrLeaseLost) || !errors.Is(err, lock.ErrNotHeld) {
		if k != nil {
			_ = k.Stop()
		}
		t.Fatalf("keep a lease that is gone: %v, want ErrLeaseLost and ErrNotHeld", err)
	}
}

// A Keeper not made by Keep (zero, or nil) keeps nothing: its Context is
// already cancelled, with the error of its Stop as the cause, so that work
// started under it ends at once instead of meeting a nil context; its Err
// says the same, and Lease and Deadline are zero.
func TestContextOfAZeroKeeperIsCancelledWithErrInvalidLeaseInsteadOfNil(t *testing.T) {
	for name, k := range map[string]*lock.Keeper{"zero": {}, "nil": nil} {
		ctx := k.Context()
		if ctx == nil {
			t.Errorf("Context of a %s Keeper is nil", name)
			continue
		}
		select {
		case <-ctx.Done():
		default:
			t.Errorf("Context of a %s Keeper is not cancelled", name)
		}
		if cause := context.Cause(ctx); !errors.Is(cause, lock.ErrInvalidLease) {
			t.Errorf("cause of a %s Keeper's Context: %v, want ErrInvalidLease", name, cause)
		}
		if err := k.Err(); !errors.Is(err, lock.ErrInvalidLease) {
			t.Errorf("Err of a %s Keeper: %v, want ErrInvalidLease", name, err)
		}
		if err := k.Stop(); !errors.Is(err, lock.ErrInvalidLease) {
			t.Errorf("Stop of a %s Keeper: %v, want ErrInvalidLease", name, err)
		}
		if d, l := k.Deadline(), k.Lease(); !d.IsZero() || l != (lock.Lease{}) {
			t.Errorf("%s Keeper: deadline %v, lease %+v; want both zero", name, d, l)
		}
	}
}

// Keep(ctx, lease, 10), meant as ten seconds, is ten nanoseconds: it renewed
// tens of thousands of times a second, every renewal a script call on the
// server. An interval under a millisecond, the server's resolution for an
// expiry, is refused before anything is sent.
func TestAKeepIntervalOfNanosecondsIsRefusedInsteadOfRenewingThousandsOfTimesASecond(t *testing.T) {
	s := redistest.Start(t)
	l := newLocker(t, s)
	lease := mustAcquire(t, l, "job", 3*time.Second)
	for _, interval := range []time.Duration{10, time.Microsecond, time.Millisecond - 1} {
		if k, err := l.Keep(context.Background(), lease, interval); !errors.Is(err, lock.ErrInvalidTTL) {
			if k != nil {
				_ = k.Stop()
			}
			t.Errorf("interval %v: %v, want ErrInvalidTTL", interval, err)
		}
	}
	k, err := l.Keep(context.Background(), lease, time.Millisecond)
	if err != nil {
		t.Fatalf("interval of a millisecond: %v", err)
	}
	if err := k.Stop(); err != nil {
		t.Fatal(err)
	}
}
