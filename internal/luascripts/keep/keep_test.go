package keep_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/luascripts/keep"
	"github.com/redis-primitives/go/internal/redistest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

var (
	errGone      = errors.New("gone")
	errTransient = errors.New("transient")
	errLost      = errors.New("lost")
)

// config keeps something for ttl, renewed every every by renew.
func config(ttl, every time.Duration, renew func(context.Context) error) keep.Config {
	return keep.Config{
		Every:    every,
		Deadline: time.Now().Add(ttl),
		Renew: func(ctx context.Context) (time.Time, error) {
			sent := time.Now()
			return sent.Add(ttl), renew(ctx)
		},
		Gone: func(err error) bool { return errors.Is(err, errGone) },
		Lost: func(_ context.Context, gone, last error) error {
			if gone != nil {
				return errors.Join(errLost, gone)
			}
			return errors.Join(errLost, last)
		},
	}
}

// Held for eight times its ttl: without its renewals it would have been
// lost seven times over. A loss is a defect only while the Keeper's own
// deadline, as last renewed, is still ahead; when the machine paused the
// loop for longer than the ttl less an interval, the deadline passed and
// losing it was right, so that round is tried again (at most five).
func TestAKeeperHoldsPastTheTTLUntilStopped(t *testing.T) {
	const ttl, every, hold = 100 * time.Millisecond, 30 * time.Millisecond, 800 * time.Millisecond
	for attempt := 1; ; attempt++ {
		var (
			n      atomic.Int64
			mu     sync.Mutex
			lostAt time.Time
		)
		c := config(ttl, every, func(context.Context) error {
			n.Add(1)
			return nil
		})
		lost := c.Lost
		c.Lost = func(ctx context.Context, gone, last error) error {
			mu.Lock()
			lostAt = time.Now()
			mu.Unlock()
			return lost(ctx, gone, last)
		}
		k := keep.Start(context.Background(), c)
		time.Sleep(hold)
		if k.Context().Err() != nil {
			_ = k.Stop()
			mu.Lock()
			early := k.Deadline().Sub(lostAt)
			mu.Unlock()
			if early > 0 {
				t.Fatalf("lost %v before its deadline as last renewed: %v", early, context.Cause(k.Context()))
			}
			if attempt == 5 {
				t.Fatalf("lost at the deadline on 5 attempts: the machine paused the loop for over %v each time", ttl-every)
			}
			t.Logf("attempt %d: lost %v after its deadline as last renewed (the loop paused); again", attempt, -early)
			continue
		}
		if err := k.Stop(); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		t.Logf("%d renewals in %v every %v", n.Load(), hold, every)
		if n.Load() < 8 {
			t.Fatalf("%d renewals in %v every %v", n.Load(), hold, every)
		}
		if k.Stop() != nil || k.Context().Err() == nil {
			t.Fatal("a second Stop, or the Context after Stop")
		}
		return
	}
}

// A renewal that proves the thing gone ends the Keeper at once: work under
// its Context must not go on until the deadline.
func TestAKeeperEndsAtOnceWhenARenewalProvesItGone(t *testing.T) {
	k := keep.Start(context.Background(), config(time.Hour, 10*time.Millisecond, func(context.Context) error { return errGone }))
	select {
	case <-k.Context().Done():
	case <-time.After(2 * time.Second):
		t.Fatal("still running 2s after the renewal said gone, with an hour to the deadline")
	}
	if cause := context.Cause(k.Context()); !errors.Is(cause, errLost) || !errors.Is(cause, errGone) {
		t.Fatalf("cause %v", cause)
	}
	if err := k.Stop(); !errors.Is(err, errGone) {
		t.Fatalf("Stop: %v", err)
	}
}

// Renewals that fail otherwise are tried again, and the thing is lost at
// its deadline, not before and not later, with the last failure in the
// cause.
func TestAKeeperWhoseRenewalsAllFailLosesItAtTheDeadline(t *testing.T) {
	var n atomic.Int64
	start := time.Now()
	k := keep.Start(context.Background(), config(300*time.Millisecond, 40*time.Millisecond, func(context.Context) error {
		n.Add(1)
		return errTransient
	}))
	<-k.Context().Done()
	took := time.Since(start)
	t.Logf("lost after %v and %d tries", took, n.Load())
	if took < 300*time.Millisecond {
		t.Fatalf("lost after %v, before the deadline of 300ms", took)
	}
	if cause := context.Cause(k.Context()); !errors.Is(cause, errTransient) {
		t.Fatalf("cause %v, want the last failure in it", cause)
	}
	if n.Load() < 3 {
		t.Fatalf("%d tries before the deadline: failures are not tried again", n.Load())
	}
	_ = k.Stop()
}

// A renewal that blocks does not hold the loss back past the deadline, and
// Stop returns once the call in flight has ended.
func TestABlockedRenewalDoesNotDelayTheLoss(t *testing.T) {
	start := time.Now()
	k := keep.Start(context.Background(), config(200*time.Millisecond, 50*time.Millisecond, func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}))
	<-k.Context().Done()
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("lost after %v with a deadline of 200ms", took)
	}
	if err := k.Stop(); !errors.Is(err, errLost) {
		t.Fatalf("Stop: %v", err)
	}
}
