package leasecore

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

var testErrs = NewErrors("test", "lease")

// testRenewal returns a Renewal of a lease sent now for ttl, renewed every
// interval by renew, whose losses it counts.
func testRenewal(ttl, interval time.Duration, renew func(context.Context) error, lost *atomic.Int32) Renewal {
	return Renewal{
		Errs: testErrs, Sent: time.Now(), TTL: ttl, Interval: interval, Margin: ttl / 10,
		Renew: renew,
		Lost:  func(context.Context, error) { lost.Add(1) },
	}
}

func TestAKeeperWhoseRenewalFindsTheLeaseGoneCancelsItsContextBeforeTheDeadline(t *testing.T) {
	var lost atomic.Int32
	r := testRenewal(time.Minute, 10*time.Millisecond, func(context.Context) error {
		return testErrs.NotHeldError("job", 7)
	}, &lost)
	k, err := Keep(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	<-k.Context().Done()
	cause := context.Cause(k.Context())
	t.Logf("cancelled %v after the lease was sent, its deadline a minute away: %v", time.Since(r.Sent), cause)
	if time.Since(r.Sent) >= r.TTL-r.Margin {
		t.Fatal("cancelled only at the deadline")
	}
	if !errors.Is(cause, testErrs.Lost) || !errors.Is(cause, testErrs.NotHeld) || errors.Is(cause, testErrs.Deadline) {
		t.Fatalf("cause %v, want Lost and NotHeld, not Deadline", cause)
	}
	if err := k.Stop(); !errors.Is(err, testErrs.Lost) || lost.Load() != 1 {
		t.Fatalf("Stop: %v, losses reported %d; want Lost, once", err, lost.Load())
	}
}

func TestAKeeperThatCannotRenewGivesUpAtTheDeadlineAndNotBefore(t *testing.T) {
	var lost atomic.Int32
	refused := errors.New("connection refused")
	r := testRenewal(300*time.Millisecond, 50*time.Millisecond, func(context.Context) error { return refused }, &lost)
	k, err := Keep(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	<-k.Context().Done()
	ended, deadline := time.Now(), r.Sent.Add(r.TTL-r.Margin)
	cause := context.Cause(k.Context())
	t.Logf("cancelled %v after the deadline: %v", ended.Sub(deadline), cause)
	if ended.Before(deadline) {
		t.Fatalf("cancelled %v before the lease's deadline", deadline.Sub(ended))
	}
	if !errors.Is(cause, testErrs.Lost) || !errors.Is(cause, testErrs.Deadline) || !errors.Is(cause, refused) {
		t.Fatalf("cause %v, want Lost and Deadline, wrapping the last renewal's error", cause)
	}
}

func TestKeepProvesALateLeaseBeforeReturningAndRefusesOneThatIsGone(t *testing.T) {
	var lost, renewals atomic.Int32
	r := testRenewal(time.Second, 300*time.Millisecond, func(context.Context) error {
		renewals.Add(1)
		return testErrs.NotHeldError("job", 7)
	}, &lost)
	r.Sent = r.Sent.Add(-800 * time.Millisecond) // its reply came late: 100ms to its deadline
	k, err := Keep(context.Background(), r)
	if err == nil {
		k.Stop()
		t.Fatal("Keep of a late lease that is gone: a Keeper, want Lost")
	}
	if !errors.Is(err, testErrs.Lost) || renewals.Load() != 1 || lost.Load() != 1 {
		t.Fatalf("Keep: %v after %d renewals, %d losses reported; want Lost after one renewal, reported once", err, renewals.Load(), lost.Load())
	}
}

func TestTheTTLFloorLeavesTimeOnceTheMarginIsTakenOff(t *testing.T) {
	o := Defaults(testErrs, "p:")
	for _, tc := range []struct {
		ttl  time.Duration
		want time.Duration // 0: refused
	}{
		{time.Microsecond, 0}, {2 * time.Millisecond, 0}, {3 * time.Millisecond, 3 * time.Millisecond},
		{1500*time.Microsecond + time.Second, 1001 * time.Millisecond},
	} {
		got, err := o.CheckTTL(tc.ttl)
		if tc.want == 0 && !errors.Is(err, testErrs.InvalidTTL) || tc.want != 0 && (err != nil || got != tc.want) {
			t.Errorf("CheckTTL(%v) = %v, %v; want %v (0: InvalidTTL)", tc.ttl, got, err, tc.want)
		}
	}
}
