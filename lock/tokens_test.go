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

func TestAcquireFailsPromptlyWhenRedisIsKilledAndWorksAfterRestart(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	l := newLocker(t, s, lock.WithCounterTokens())
	lease := mustAcquire(t, l, "job", time.Minute)
	if lease.Token != 1 {
		t.Fatalf("token %d", lease.Token)
	}

	s.Kill(t)
	// go-redis keeps redialling a refused connection for ~1.7s by default:
	// the ctx is what bounds the call.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := l.Acquire(ctx, "job", time.Second)
	took := time.Since(start)
	t.Logf("killed: acquire failed after %v: %v", took, err)
	if err == nil {
		t.Fatal("acquire against a killed server succeeded")
	}
	if took > 300*time.Millisecond+200*time.Millisecond {
		t.Fatalf("acquire took %v, want bounded by the 300ms ctx", took)
	}
	if _, err := l.Holder(ctx, "job"); err == nil {
		t.Fatal("holder against a killed server succeeded")
	}
	if _, err := l.Release(ctx, lease); err == nil {
		t.Fatal("release against a killed server succeeded")
	}

	s.Restart(t) // comes back empty: no persistence
	waitFor(t, 5*time.Second, "acquire works after restart", func() bool {
		_, err := l.Acquire(context.Background(), "job", time.Second)
		return err == nil
	})
	// The counter did not survive the restart: tokens start over. This is
	// the failure Preflight warns about.
	h, err := l.Holder(context.Background(), "job")
	if err != nil || h.Token != 1 {
		t.Fatalf("holder after restart = %+v, %v; want token 1 reissued", h, err)
	}
}

func TestAcquireAgainstFrozenRedisEndsWithTheContext(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	l := newLocker(t, s)
	mustAcquire(t, l, "warm", time.Second) // a pooled connection exists

	s.Freeze(t)
	defer s.Thaw(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := l.Acquire(ctx, "job", time.Second)
	took := time.Since(start)
	t.Logf("frozen: acquire returned after %v: %v", took, err)
	if !errorsIsDeadline(err) {
		t.Fatalf("acquire against a frozen server: %v, want context.DeadlineExceeded", err)
	}
	if took > 300*time.Millisecond+time.Second {
		t.Fatalf("acquire took %v with a 300ms ctx", took)
	}
}
