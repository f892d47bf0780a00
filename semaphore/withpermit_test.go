package semaphore_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
)

// fn runs for several TTLs; the renewals keep its permit live, the whole
// time it counts against the capacity, and it is released at the end.
func TestWithPermitKeepsThePermitLiveForAsLongAsFnRunsAndReleasesIt(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s)
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	var ran bool
	err := i.WithPermit(ctx, "job", 1, ttl, func(ctx context.Context, p *semaphore.Permit) error {
		end := time.Now().Add(4 * ttl)
		for time.Now().Before(end) {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if _, err := i.Acquire(context.Background(), "job", 1, time.Second); !errors.Is(err, semaphore.ErrFull) {
				t.Errorf("acquire while fn runs: %v, want ErrFull", err)
				return nil
			}
			time.Sleep(ttl / 5)
		}
		ran = true
		return nil
	})
	if err != nil || !ran {
		t.Fatalf("WithPermit over 4 TTLs: %v, ran %v", err, ran)
	}
	if h := holders(t, i, "job"); len(h) != 0 {
		t.Fatalf("%d permits live after WithPermit returned", len(h))
	}
}

// A renewal that finds the permit gone (here deleted, as an operator or a
// lost failover would) cancels fn's context with ErrPermitLost, and
// WithPermit says so.
func TestWithPermitCancelsFnsContextWhenThePermitIsGone(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s)
	raw := s.Client(t)
	ctx := context.Background()
	const ttl = 300 * time.Millisecond
	var lostAfter time.Duration
	err := i.WithPermit(ctx, "job", 1, ttl, func(ctx context.Context, p *semaphore.Permit) error {
		if err := raw.ZRem(context.Background(), permitsKey(s, "job"), p.ID).Err(); err != nil {
			return err
		}
		gone := time.Now()
		select {
		case <-ctx.Done():
			lostAfter = time.Since(gone)
			return context.Cause(ctx)
		case <-time.After(5 * ttl):
			return errors.New("fn's context outlived the permit")
		}
	})
	t.Logf("permit deleted: fn's context cancelled %v later (renewal every %v): %v", lostAfter, ttl/3, err)
	if !errors.Is(err, semaphore.ErrPermitLost) || !errors.Is(err, semaphore.ErrNotHeld) {
		t.Fatalf("WithPermit: %v, want ErrPermitLost and ErrNotHeld", err)
	}
	if lostAfter > ttl/3+100*time.Millisecond {
		t.Fatalf("cancelled %v after the permit was gone, want within one renewal interval %v", lostAfter, ttl/3)
	}
}

// A frozen server answers no renewal: fn's context ends at the permit's
// local deadline, not later, with ErrDeadline.
func TestWithPermitEndsFnByThePermitsDeadlineWhenRedisIsFrozen(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	i := newIssuer(t, s)
	const ttl = 300 * time.Millisecond
	var p0 *semaphore.Permit
	var ended time.Time
	err := i.WithPermit(context.Background(), "job", 1, ttl, func(ctx context.Context, p *semaphore.Permit) error {
		p0 = p
		s.Freeze(t)
		<-ctx.Done()
		ended = time.Now()
		s.Thaw(t)
		return nil
	})
	over := ended.Sub(p0.Deadline(ttl/100 + 2*time.Millisecond))
	t.Logf("server frozen: fn's context ended %v after the permit's local deadline: %v", over, err)
	if !errors.Is(err, semaphore.ErrPermitLost) || !errors.Is(err, semaphore.ErrDeadline) {
		t.Fatalf("WithPermit: %v, want ErrPermitLost and ErrDeadline", err)
	}
	if over > 100*time.Millisecond {
		t.Fatalf("fn's context ended %v after the deadline", over)
	}
}

// fn panics: the permit is released on the way out and the panic goes on.
func TestWithPermitReleasesThePermitWhenFnPanics(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s)
	var wg sync.WaitGroup
	var recovered any
	wg.Go(func() {
		defer func() { recovered = recover() }()
		_ = i.WithPermit(context.Background(), "job", 1, time.Minute, func(context.Context, *semaphore.Permit) error { panic("boom") })
	})
	wg.Wait()
	if recovered != "boom" {
		t.Fatalf("recovered %v, want the panic", recovered)
	}
	if h := holders(t, i, "job"); len(h) != 0 {
		t.Fatalf("%d permits live after fn panicked", len(h))
	}
}

func TestWithPermitOnAFullSemaphoreDoesNotRunFn(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s)
	mustAcquire(t, i, "job", 1, time.Minute)
	err := i.WithPermit(context.Background(), "job", 1, time.Second, func(context.Context, *semaphore.Permit) error {
		t.Error("fn ran without a permit")
		return nil
	})
	if !errors.Is(err, semaphore.ErrFull) {
		t.Fatalf("WithPermit on a full semaphore: %v, want ErrFull", err)
	}
}

// A Keeper holds a permit across several TTLs for code that is not one
// function call; its Context stays alive, Stop reports nothing lost, and
// the permit is still live for Release.
func TestAKeeperHoldsAPermitAcrossSeveralTTLs(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s)
	const ttl = 300 * time.Millisecond
	p := mustAcquire(t, i, "job", 1, ttl)
	k, err := i.Keep(context.Background(), p, ttl/3)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*ttl, "four TTLs passed", func() bool { return time.Since(p.RequestedAt) > 4*ttl })
	if err := k.Context().Err(); err != nil {
		t.Fatalf("keeper's context after 4 TTLs: %v (%v)", err, context.Cause(k.Context()))
	}
	if err := k.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := k.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	mustRelease(t, i, p)
	if _, err := i.Keep(context.Background(), p, ttl); !errors.Is(err, semaphore.ErrInvalidTTL) {
		t.Fatalf("Keep with an interval of one TTL: %v, want ErrInvalidTTL", err)
	}
}

// WithLogger logs a permit lost while held and a release that found its
// permit gone, at Warn, and nothing on the paths that went well.
func TestWithLoggerLogsOnlyPermitsThatWereLost(t *testing.T) {
	s := redistest.Start(t)
	var buf syncBuffer
	i := newIssuer(t, s, semaphore.WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	raw := s.Client(t)
	ctx := context.Background()
	mustRelease(t, i, mustAcquire(t, i, "fine", 1, time.Second))
	if buf.String() != "" {
		t.Fatalf("logged on a clean acquire and release: %s", buf.String())
	}
	expired := mustAcquire(t, i, "job", 1, 20*time.Millisecond)
	waitFor(t, time.Second, "the permit expired", func() bool { return len(holders(t, i, "job")) == 0 })
	if ok, err := i.Release(ctx, expired); ok || err != nil {
		t.Fatalf("release of an expired permit: %v, %v", ok, err)
	}
	_ = i.WithPermit(ctx, "job", 1, 300*time.Millisecond, func(ctx context.Context, p *semaphore.Permit) error {
		_ = raw.ZRem(ctx, permitsKey(s, "job"), p.ID).Err()
		<-ctx.Done()
		return nil
	})
	out := buf.String()
	t.Logf("logged:\n%s", out)
	if !strings.Contains(out, "level=WARN msg=\"semaphore: permit was gone before its release\"") ||
		!strings.Contains(out, "level=WARN msg=\"semaphore: permit lost while held\"") {
		t.Fatalf("want one warning of each kind, got:\n%s", out)
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Keep(ctx, p, 10), meant as ten seconds, is ten nanoseconds: refused, as
// lock's Keep refuses it, instead of renewing tens of thousands of times a
// second.
func TestAKeepIntervalOfNanosecondsIsRefusedInsteadOfRenewingThousandsOfTimesASecond(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s)
	p := mustAcquire(t, i, "job", 1, 3*time.Second)
	for _, interval := range []time.Duration{10, time.Millisecond - 1} {
		if k, err := i.Keep(context.Background(), p, interval); !errors.Is(err, semaphore.ErrInvalidTTL) {
			if k != nil {
				_ = k.Stop()
			}
			t.Errorf("interval %v: %v, want ErrInvalidTTL", interval, err)
		}
	}
	mustRelease(t, i, p)
}
