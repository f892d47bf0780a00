package fence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/lock"
)

// The scenario the project is built around, with the figures of the seed:
// A's lease is 200ms and its work takes 350ms; B acquires at about 220ms,
// after A's lease expired on the server, and writes; then A, still
// believing it holds the lock, writes.
const (
	leaseTTL = 200 * time.Millisecond
	bStarts  = 220 * time.Millisecond
	aWork    = 350 * time.Millisecond
)

type expiry struct {
	a, b        *lock.Lease
	aErr, bErr  error
	bAcquiredAt time.Duration
	aWroteAt    time.Duration
}

// expiredLease plays the scenario. write is the resource's write, fenced or
// not; it is called by B, then by A.
func expiredLease(t *testing.T, locker *lock.Locker, name string, write func(ctx context.Context, who string, token int64) error) expiry {
	t.Helper()
	ctx := context.Background()
	var r expiry
	t0 := time.Now()
	a, err := locker.Acquire(ctx, name, leaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	r.a = a
	bWrote := make(chan struct{})
	go func() {
		defer close(bWrote)
		time.Sleep(time.Until(t0.Add(bStarts)))
		// A's lease has expired on the server by now; on a loaded machine
		// the acquire may still race it, so try until it succeeds.
		deadline := time.Now().Add(2 * time.Second)
		for {
			b, err := locker.Acquire(ctx, name, 10*time.Second)
			if err == nil {
				r.b, r.bAcquiredAt = b, time.Since(t0)
				r.bErr = write(ctx, "B", b.Token)
				return
			}
			if !errors.Is(err, lock.ErrHeld) || time.Now().After(deadline) {
				r.bErr = err
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	time.Sleep(time.Until(t0.Add(aWork))) // A's work: the scenario, not a wait
	<-bWrote                              // on a slow machine, make sure B wrote first
	if r.bErr != nil {
		t.Fatalf("B: %v", r.bErr)
	}
	r.aWroteAt = time.Since(t0)
	r.aErr = write(ctx, "A", a.Token)
	t.Logf("A token %d (lease %v), B token %d acquired at %v, A wrote at %v",
		a.Token, leaseTTL, r.b.Token, r.bAcquiredAt.Round(time.Millisecond), r.aWroteAt.Round(time.Millisecond))
	if r.bAcquiredAt < leaseTTL {
		t.Fatalf("B acquired at %v, before A's %v lease could expire", r.bAcquiredAt, leaseTTL)
	}
	if r.b.Token <= a.Token {
		t.Fatalf("B's token %d is not above A's %d", r.b.Token, a.Token)
	}
	return r
}

func newLocker(t *testing.T, c *redis.Client, prefix string, opts ...lock.Option) *lock.Locker {
	t.Helper()
	l, err := lock.New(goredisadapter.New(c), append([]lock.Option{lock.WithPrefix(prefix + "lock:")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestStaleHoldersWriteIsRefusedAndNextHoldersValueSurvives(t *testing.T) {
	store, c, p := newStore(t)
	locker := newLocker(t, c, p)
	key, hash := p+"{acct}", p+"{acct}:h"
	r := expiredLease(t, locker, "acct", func(ctx context.Context, who string, token int64) error {
		f := store.Fencer(token)
		if err := f.Set(ctx, key, who); err != nil {
			return err
		}
		return f.HSet(ctx, hash, "by", who)
	})
	wantStale(t, r.aErr, r.a.Token, r.b.Token)
	if v := mustGet(t, store, key); v != "B" {
		t.Fatalf("value = %q, want B's: the stale write got through", v)
	}
	if v, err := store.HGet(context.Background(), hash, "by"); err != nil || v != "B" {
		t.Fatalf("hash field = %q, %v; want B's", v, err)
	}
}

func TestWithoutFencingStaleHolderSilentlyClobbersNextHoldersWrite(t *testing.T) {
	_, c, p := newStore(t)
	locker := newLocker(t, c, p)
	key := p + "{acct}"
	r := expiredLease(t, locker, "acct", func(ctx context.Context, who string, _ int64) error {
		return c.Set(ctx, key, who, 0).Err() // a plain SET, token ignored
	})
	if r.aErr != nil {
		t.Fatal(r.aErr)
	}
	if v := c.Get(context.Background(), key).Val(); v != "A" {
		t.Fatalf("value = %q; a plain SET was expected to let the stale holder A overwrite B", v)
	}
}

// The documented limit: the token is only as good as the lock's counter.
// Lose it (eviction, FLUSHALL, a restart without persistence) and the next
// holder gets a token already issued, and the stale holder's write, equal
// to it, is accepted over the new holder's.
// With counter-only tokens (lock.WithCounterTokens), a lost counter
// reissues a token already handed out, and the fence then accepts a
// genuinely stale holder.
func TestLostLockCounterReissuesTokenAndStaleWriteIsAccepted(t *testing.T) {
	store, c, p := newStore(t)
	locker := newLocker(t, c, p, lock.WithCounterTokens())
	ctx := context.Background()
	key := p + "{acct}"
	a, b := loseCounterBetweenTwoHolders(t, c, locker, p)
	t.Logf("A token %d, B token %d after the counter was lost", a.Token, b.Token)
	if b.Token != a.Token {
		t.Fatalf("B got token %d, A had %d: expected the lost counter to reissue A's token", b.Token, a.Token)
	}
	if err := store.Set(ctx, b.Token, key, "B"); err != nil {
		t.Fatal(err)
	}
	if err := store.Set(ctx, a.Token, key, "A"); err != nil {
		t.Fatalf("stale A with a reissued token: %v; expected it accepted (the limit this test documents)", err)
	}
	if v := mustGet(t, store, key); v != "A" {
		t.Fatalf("value = %q, want the stale A's", v)
	}
}

// With the default tokens (the server's clock in µs when it is ahead of the
// counter), the same loss issues B a token above A's, and A's late write is
// refused.
func TestLostLockCounterWithDefaultTokensStillFencesTheStaleHolderOut(t *testing.T) {
	store, c, p := newStore(t)
	locker := newLocker(t, c, p)
	ctx := context.Background()
	key := p + "{acct}"
	a, b := loseCounterBetweenTwoHolders(t, c, locker, p)
	t.Logf("A token %d, B token %d after the counter was lost", a.Token, b.Token)
	if b.Token <= a.Token {
		t.Fatalf("B got token %d, A had %d: the lost counter reissued a token", b.Token, a.Token)
	}
	if err := store.Set(ctx, b.Token, key, "B"); err != nil {
		t.Fatal(err)
	}
	wantStale(t, store.Set(ctx, a.Token, key, "A"), a.Token, b.Token)
	if v := mustGet(t, store, key); v != "B" {
		t.Fatalf("value = %q, want B's: the stale write got through", v)
	}
}

// loseCounterBetweenTwoHolders lets A take the lock, deletes the fencing
// counter, and returns A's lease and that of B, who acquires once A's lease
// has expired.
func loseCounterBetweenTwoHolders(t *testing.T, c *redis.Client, locker *lock.Locker, p string) (a, b *lock.Lease) {
	t.Helper()
	ctx := context.Background()
	a, err := locker.Acquire(ctx, "acct", 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	// The counter key as package lock documents it: prefix + "{name}:token".
	counter := p + "lock:{acct}:token"
	if n, err := c.Del(ctx, counter).Result(); err != nil || n != 1 {
		t.Fatalf("delete the counter %q: %d, %v", counter, n, err)
	}
	for { // wait for A's lease to expire
		b, err = locker.Acquire(ctx, "acct", time.Second)
		if err == nil {
			return a, b
		}
		if !errors.Is(err, lock.ErrHeld) {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
