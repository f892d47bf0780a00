package lock_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

func TestWithLockRunsFnUnderTheLockAndReleasesIt(t *testing.T) {
	s := redistest.Start(t)
	l, other := newLocker(t, s), newLocker(t, s)
	ctx := context.Background()
	ran := false
	err := l.WithLock(ctx, "job", time.Second, func(ctx context.Context, lease *lock.Lease) error {
		ran = true
		h, err := other.Holder(ctx, "job")
		if err != nil || !h.Held || h.Token != lease.Token {
			t.Errorf("inside fn: holder %+v, %v; want token %d", h, err, lease.Token)
		}
		return nil
	})
	if err != nil || !ran {
		t.Fatalf("WithLock: %v, ran %v", err, ran)
	}
	if h, err := other.Holder(ctx, "job"); err != nil || h.Held {
		t.Fatalf("after WithLock: holder %+v, %v; want released", h, err)
	}
	// fn's error comes back as it is, and the lock is released all the same.
	boom := errors.New("boom")
	if err := l.WithLock(ctx, "job", time.Second, func(context.Context, *lock.Lease) error { return boom }); !errors.Is(err, boom) || errors.Is(err, lock.ErrLeaseLost) {
		t.Fatalf("WithLock with a failing fn: %v", err)
	}
	if h, _ := other.Holder(ctx, "job"); h.Held {
		t.Fatal("a failing fn left the lock held")
	}
}

func TestWithLockDoesNotRunFnWhenHeld(t *testing.T) {
	s := redistest.Start(t)
	l, other := newLocker(t, s), newLocker(t, s)
	mustAcquire(t, other, "job", 10*time.Second)
	err := l.WithLock(context.Background(), "job", time.Second, func(context.Context, *lock.Lease) error {
		t.Error("fn ran while the lock was held by another")
		return nil
	})
	if !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("WithLock on a held name: %v, want ErrHeld", err)
	}
}

func TestWithLockKeepsA200msLeaseAliveThrough1sOfWork(t *testing.T) {
	s := redistest.Start(t)
	l, other := newLocker(t, s), newLocker(t, s)
	const ttl = 200 * time.Millisecond
	checks := 0
	err := l.WithLock(context.Background(), "job", ttl, func(ctx context.Context, lease *lock.Lease) error {
		for start := time.Now(); time.Since(start) < time.Second; checks++ {
			time.Sleep(ttl / 4) // the work
			if ctx.Err() != nil {
				t.Fatalf("fn's context ended after %v: %v", time.Since(start), context.Cause(ctx))
			}
			_, err := other.Acquire(context.Background(), "job", ttl)
			var held *lock.HeldError
			if !errors.As(err, &held) || held.Token != lease.Token {
				t.Fatalf("after %v of work another acquire got %v; want held by token %d", time.Since(start), err, lease.Token)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("WithLock: %v", err)
	}
	t.Logf("lease of %v held through 1s of work, %d checks by another worker", ttl, checks)
}

func TestWithLockCancelsFnWithinOneRenewIntervalWhenTheLockIsDeletedUnderIt(t *testing.T) {
	s := redistest.Start(t)
	const ttl = 300 * time.Millisecond
	interval := ttl / 3 // the default renew fraction
	l := newLocker(t, s)
	raw := s.Client(t)
	var took time.Duration
	err := l.WithLock(context.Background(), "job", ttl, func(ctx context.Context, lease *lock.Lease) error {
		if err := raw.Del(ctx, lockKey(s, "job")).Err(); err != nil {
			t.Fatal(err)
		}
		deleted := time.Now()
		select {
		case <-ctx.Done():
			took = time.Since(deleted)
		case <-time.After(10 * ttl):
			t.Fatal("fn's context was never cancelled after the lock was deleted")
		}
		cause := context.Cause(ctx)
		if !errors.Is(cause, lock.ErrLeaseLost) || !errors.Is(cause, lock.ErrNotHeld) {
			t.Errorf("cause %v, want ErrLeaseLost and ErrNotHeld", cause)
		}
		return nil
	})
	t.Logf("lock deleted: fn's context cancelled %v later (renew interval %v)", took, interval)
	if !errors.Is(err, lock.ErrLeaseLost) {
		t.Fatalf("WithLock: %v, want ErrLeaseLost", err)
	}
	if took > interval+100*time.Millisecond {
		t.Fatalf("cancelled %v after the deletion, want within one renew interval (%v) plus slack", took, interval)
	}
}

// The cancel is late only by what the machine held this process back: a
// round whose cancel came past the bound while a timer of the test's own
// fired as late is tried again (at most three).
func TestWithLockCancelsFnBeforeTheLeaseEndsWhenRedisIsFrozen(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	const ttl = 300 * time.Millisecond
	interval := ttl / 3
	margin := ttl/100 + 2*time.Millisecond // the default
	l := newLocker(t, s)
	// The last renewal that succeeded was sent at most one interval (plus its
	// round trip) before the freeze: the deadline falls in this range.
	low, high := ttl-margin-interval-50*time.Millisecond, ttl-margin+50*time.Millisecond
	for attempt := 1; ; attempt++ {
		var took time.Duration
		pauses := redistest.WatchPauses()
		err := l.WithLock(context.Background(), fmt.Sprintf("job-%d", attempt), ttl, func(ctx context.Context, lease *lock.Lease) error {
			s.Freeze(t)
			defer s.Thaw(t)
			frozen := time.Now()
			select {
			case <-ctx.Done():
				took = time.Since(frozen)
			case <-time.After(10 * ttl):
				t.Fatal("fn's context was never cancelled while Redis was frozen")
			}
			if cause := context.Cause(ctx); !errors.Is(cause, lock.ErrLeaseLost) || !errors.Is(cause, lock.ErrDeadline) {
				t.Errorf("cause %v, want ErrLeaseLost and ErrDeadline", cause)
			}
			return nil
		})
		paused := pauses.Stop()
		t.Logf("Redis frozen: fn's context cancelled %v later (ttl %v, renew every %v, margin %v; the process paused %v at most)", took, ttl, interval, margin, paused)
		if !errors.Is(err, lock.ErrLeaseLost) || !errors.Is(err, lock.ErrDeadline) {
			t.Fatalf("WithLock: %v, want ErrLeaseLost (deadline)", err)
		}
		if took > high && paused >= took-high && attempt < 3 {
			continue // the machine, not the Keeper, was late
		}
		if took < low || took > high {
			t.Fatalf("cancelled %v after the freeze, want between %v and %v", took, low, high)
		}
		return
	}
}

// The stale worker ignores its context and runs on after its lease could not
// be renewed and has expired; meanwhile the next worker takes the lock. The
// stale worker's release at the end must not delete the next worker's lock.
func TestWithLockOverrunningBodyDoesNotDeleteTheNextHoldersLock(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	const ttl = 200 * time.Millisecond
	stale, next, third := newLocker(t, s), newLocker(t, s), newLocker(t, s)
	var nextLease *lock.Lease
	err := stale.WithLock(context.Background(), "job", ttl, func(ctx context.Context, lease *lock.Lease) error {
		s.Freeze(t) // no renewal gets through
		frozen := time.Now()
		<-ctx.Done()
		// Stay frozen until the lease has expired by the server's clock too.
		time.Sleep(ttl + 50*time.Millisecond - time.Since(frozen))
		s.Thaw(t)
		waitFor(t, 2*time.Second, "the next worker acquires", func() bool {
			var err error
			nextLease, err = next.Acquire(context.Background(), "job", 10*time.Second)
			return err == nil
		})
		if nextLease.Token <= lease.Token {
			t.Errorf("next token %d not above the stale %d", nextLease.Token, lease.Token)
		}
		return nil // overran: the work went on regardless
	})
	if !errors.Is(err, lock.ErrLeaseLost) {
		t.Fatalf("stale WithLock: %v, want ErrLeaseLost", err)
	}
	h, err := third.Holder(context.Background(), "job")
	if err != nil || !h.Held || h.Token != nextLease.Token {
		t.Fatalf("holder after the stale worker's release: %+v, %v; want the next worker's token %d", h, err, nextLease.Token)
	}
	if _, err := third.Acquire(context.Background(), "job", ttl); !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("a third worker: %v, want ErrHeld", err)
	}
}

func TestWithLockReleasesAndStopsRenewingWhenFnPanics(t *testing.T) {
	s := redistest.Start(t)
	l := newLocker(t, s)
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recovered %v, want the fn's panic", p)
			}
		}()
		_ = l.WithLock(context.Background(), "job", time.Second, func(context.Context, *lock.Lease) error { panic("boom") })
	}()
	if h, err := l.Holder(context.Background(), "job"); err != nil || h.Held {
		t.Fatalf("after a panicking fn: holder %+v, %v; want released", h, err)
	}
}

// Renewals now fail at once (connection refused): they are retried until the
// lease's local deadline and not past it.
func TestWithLockCancelsFnAtTheDeadlineWhenRedisIsKilled(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	const ttl = 300 * time.Millisecond
	margin := ttl/100 + 2*time.Millisecond
	// One dial attempt per renewal, so a refused connection fails the
	// renewal at once (go-redis otherwise retries dials for ~1.7s).
	l := newLockerOn(t, s, client(t, s, func(o *redis.Options) { oneDialAttempt(o); o.MaxRetries = -1 }))
	var took, late time.Duration
	var cause error
	err := l.WithLock(context.Background(), "job", ttl, func(ctx context.Context, lease *lock.Lease) error {
		deadline := lease.Deadline(margin)
		s.Kill(t)
		killed := time.Now()
		select {
		case <-ctx.Done():
			took, late, cause = time.Since(killed), time.Since(deadline), context.Cause(ctx)
		case <-time.After(10 * ttl):
			t.Fatal("fn's context was never cancelled with Redis down")
		}
		return nil
	})
	t.Logf("Redis killed: fn's context cancelled %v later, %v after the lease's deadline (ttl %v): %v", took, late, ttl, cause)
	if !errors.Is(cause, lock.ErrLeaseLost) || !errors.Is(cause, lock.ErrDeadline) || !strings.Contains(cause.Error(), "last renewal") {
		t.Fatalf("cause %v, want ErrLeaseLost, ErrDeadline and the last renewal's error", cause)
	}
	if !errors.Is(err, lock.ErrLeaseLost) {
		t.Fatalf("WithLock: %v", err)
	}
	// At the deadline: the keeper's timer fires then, whatever the
	// renewals are doing. The slack, less than one renewal interval (ttl/3),
	// is for a timer and a cancellation delivered on busy cores under
	// -race (measured from the kill, it once came 6 ms past a 50 ms slack).
	if late > ttl/3 || took < ttl/3 {
		t.Fatalf("cancelled %v after the kill, %v after the lease's deadline; want at the deadline (within %v) and not at the first failed renewal", took, late, ttl/3)
	}
}

// t.Fatal inside fn ends fn's goroutine with runtime.Goexit, which no
// recover sees. The lock must still be given back, not renewed for as long
// as ctx lives.
func TestWithLockReleasesWhenFnEndsItsGoroutine(t *testing.T) {
	s := redistest.Start(t)
	l := newLocker(t, s)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = l.WithLock(context.Background(), "job", 5*time.Second, func(context.Context, *lock.Lease) error {
			runtime.Goexit()
			return nil
		})
	}()
	<-done
	waitGone(t, l, "job", time.Second) // far less than the 5 s TTL: released, not expired
}

// oneDialAttempt makes go-redis dial once per command. Options.DialerRetries
// exists from go-redis v9.16 on, and this module supports v9.7.3 (README,
// Compatibility), whose pool dials once anyway: set it only where it exists,
// so the floor's tests compile.
func oneDialAttempt(o *redis.Options) {
	if f := reflect.ValueOf(o).Elem().FieldByName("DialerRetries"); f.IsValid() {
		f.SetInt(1)
	}
}
