package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

func TestForceReleaseFreesALockWhoseHolderStillRunsAndItsTokenIsBelowTheNext(t *testing.T) {
	s := redistest.Start(t)
	l := newLocker(t, s)
	ctx := context.Background()
	old := mustAcquire(t, l, "job", time.Minute)
	if ok, err := l.ForceRelease(ctx, "job"); err != nil || !ok {
		t.Fatalf("force release: %v, %v", ok, err)
	}
	next := mustAcquire(t, l, "job", time.Minute)
	if next.Token <= old.Token {
		t.Fatalf("token after a forced release %d, not above the old holder's %d", next.Token, old.Token)
	}
	// The old holder learns it lost the lock at its next renewal or release.
	if err := l.Extend(ctx, old, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("old holder's extend: %v, want ErrNotHeld", err)
	}
	if ok, err := l.Release(ctx, old); err != nil || ok {
		t.Fatalf("old holder's release: %v, %v; want false", ok, err)
	}
	if h, err := l.Holder(ctx, "job"); err != nil || h.Token != next.Token {
		t.Fatalf("holder %+v, %v; want the next holder intact", h, err)
	}
	if ok, err := l.ForceRelease(ctx, "nobody"); err != nil || ok {
		t.Fatalf("force release of a free name: %v, %v; want false", ok, err)
	}
	if _, err := l.ForceRelease(ctx, ""); !errors.Is(err, lock.ErrInvalidName) {
		t.Fatalf("empty name: %v", err)
	}
}
