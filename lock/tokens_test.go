package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

func TestTokensStrictlyIncreaseAcrossReleasesExpiriesAndCrashedHolders(t *testing.T) {
	s := redistest.Start(t)
	l := newLocker(t, s)
	ctx := context.Background()
	var tokens []int64

	// A clean release.
	lease := mustAcquire(t, l, "job", time.Second)
	tokens = append(tokens, lease.Token)
	if ok, err := l.Release(ctx, lease); err != nil || !ok {
		t.Fatalf("release: %v, %v", ok, err)
	}
	// A holder whose lease expired.
	lease = mustAcquire(t, l, "job", 30*time.Millisecond)
	tokens = append(tokens, lease.Token)
	waitGone(t, l, "job", 2*time.Second)
	// A holder that crashed: its client and connections are gone, nothing
	// was released.
	crashedClient := client(t, s)
	crashed := newLockerOn(t, s, crashedClient)
	lease = mustAcquire(t, crashed, "job", 30*time.Millisecond)
	tokens = append(tokens, lease.Token)
	if err := crashedClient.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, l, "job", 2*time.Second)
	// And a stale release attempt in between must not reset anything.
	stale := lease
	lease = mustAcquire(t, l, "job", time.Second)
	tokens = append(tokens, lease.Token)
	if ok, _ := newLocker(t, s).Release(ctx, stale); ok {
		t.Fatal("a stale lease released the current lock")
	}
	tokens = append(tokens, mustRelease(t, l, lease, "job"))
	t.Logf("tokens: %v", tokens)
	for i := 1; i < len(tokens); i++ {
		if tokens[i] <= tokens[i-1] {
			t.Fatalf("tokens %v are not strictly increasing", tokens)
		}
	}
}

// mustRelease releases lease and acquires name once more, returning the
// new token.
func mustRelease(t *testing.T, l *lock.Locker, lease *lock.Lease, name string) int64 {
	t.Helper()
	if ok, err := l.Release(context.Background(), lease); err != nil || !ok {
		t.Fatalf("release: %v, %v", ok, err)
	}
	return mustAcquire(t, l, name, time.Second).Token
}

// The documented failure mode: the counter has no TTL and must never be
// lost. If it is (eviction, FLUSHALL, a restart without persistence), INCR
// starts again and a token already handed out is handed out again, so the
// resource can no longer tell the two holders apart.
func TestLosingTheCounterKeyReissuesATokenAlreadyHandedOut(t *testing.T) {
	s := redistest.Start(t)
	l := newLocker(t, s, lock.WithCounterTokens())
	ctx := context.Background()

	first := mustAcquire(t, l, "job", time.Second)
	if ok, err := l.Release(ctx, first); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := s.Client(t).Del(ctx, counterKey(s, "job")).Err(); err != nil {
		t.Fatal(err)
	}
	second := mustAcquire(t, l, "job", time.Second)
	if second.Token != first.Token {
		t.Fatalf("after losing the counter: token %d, first was %d; expected the same token reissued", second.Token, first.Token)
	}
	t.Logf("counter lost: token %d was issued twice", second.Token)
}
