package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
)

// An Acquire sent to a frozen server times out, and the server runs it when
// it wakes: the name used to stay locked for a full TTL by a lease no
// caller held. The Locker now releases it by its own id once the server
// answers again, well before the TTL.
func TestAcquireThatTimedOutOnAFrozenServerDoesNotLeaveTheNameLocked(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	l := newLocker(t, s)
	admin := s.Client(t)
	ctx := context.Background()
	const ttl = 10 * time.Second
	// Load the scripts: a first EVALSHA that times out never runs anything,
	// since the server answers it NOSCRIPT.
	if _, err := l.Release(ctx, mustAcquire(t, l, "other", ttl)); err != nil {
		t.Fatal(err)
	}

	s.Freeze(t)
	actx, cancel := context.WithTimeout(ctx, ttl/50)
	lease, err := l.Acquire(actx, "job", ttl)
	cancel()
	s.Thaw(t)
	if lease != nil || !errorsIsDeadline(err) {
		t.Fatalf("acquire on a frozen server: %v, %v; want a deadline", lease, err)
	}
	woke := time.Now()
	// The acquire ran after the thaw: it issued a token.
	waitFor(t, ttl/4, "the timed-out acquire ran", func() bool {
		n, _ := admin.Exists(ctx, counterKey(s, "job")).Result()
		return n == 1
	})
	waitGone(t, l, "job", ttl/4)
	t.Logf("the name was free again %v after the thaw (TTL %v)", time.Since(woke).Round(time.Millisecond), ttl)
	mustAcquire(t, l, "job", ttl)
}

// The clean-up compares ids: it never releases another holder's lock.
func TestCleanupOfATimedOutAcquireLeavesTheHoldersLockAlone(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	l := newLocker(t, s)
	ctx := context.Background()
	const ttl = 10 * time.Second
	held := mustAcquire(t, newLocker(t, s), "job", ttl)
	// Load the release script, so that each release is one EVALSHA.
	if _, err := l.Release(ctx, mustAcquire(t, l, "other", ttl)); err != nil {
		t.Fatal(err)
	}
	admin := s.Client(t)
	base := scriptCalls(t, admin)

	s.Freeze(t)
	actx, cancel := context.WithTimeout(ctx, ttl/50)
	_, err := l.Acquire(actx, "job", ttl)
	cancel()
	s.Thaw(t)
	if !errorsIsDeadline(err) {
		t.Fatalf("acquire on a frozen server: %v; want a deadline", err)
	}
	// The acquire and the clean-up's two releases have run.
	waitFor(t, ttl/4, "the clean-up ran", func() bool { return scriptCalls(t, admin) >= base+3 })
	h, err := l.Holder(ctx, "job")
	if err != nil || !h.Held || h.Token != held.Token {
		t.Fatalf("holder after the clean-up: %+v, %v; want token %d", h, err, held.Token)
	}
}
