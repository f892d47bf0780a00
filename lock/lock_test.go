package lock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/naivelock"
	"github.com/redis-primitives/go/lock"
)

func TestSecondAcquireIsRefusedWhileLeaseIsLive(t *testing.T) {
	s := redistest.Start(t)
	a := newLocker(t, s, lock.WithCounterTokens(), lock.WithOwner("node-a"))
	b := newLocker(t, s, lock.WithCounterTokens(), lock.WithOwner("node-b"))
	ctx := context.Background()

	first := mustAcquire(t, a, "job", 5*time.Second)
	if first.Token != 1 || first.Owner != "node-a" || first.TTL != 5*time.Second || first.Name != "job" {
		t.Fatalf("first lease = %+v", first)
	}
	refused, err := b.Acquire(ctx, "job", 5*time.Second)
	if !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("second acquire: %v, want ErrHeld", err)
	}
	if refused != nil {
		t.Fatalf("a refused acquire returned a lease %+v; a caller testing it for nil would think it holds the lock", refused)
	}
	// The refusal tells who holds it and for how long, in the same round trip.
	var held *lock.HeldError
	if !errors.As(err, &held) {
		t.Fatalf("%T is not a *HeldError", err)
	}
	if held.Token != first.Token || held.Owner != "node-a" || held.TTL <= 0 || held.TTL > 5*time.Second {
		t.Fatalf("held = %+v", held)
	}
	// Not even the same Locker gets it twice.
	if _, err := a.Acquire(ctx, "job", time.Second); !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("re-acquire by the holder's Locker: %v, want ErrHeld", err)
	}
	h, err := b.Holder(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if !h.Held || h.Token != first.Token || h.Owner != "node-a" || h.TTL <= 0 || h.TTL > 5*time.Second {
		t.Fatalf("holder = %+v", h)
	}
	if ok, err := a.Release(ctx, first); err != nil || !ok {
		t.Fatalf("release: %v, %v", ok, err)
	}
	if h, err := b.Holder(ctx, "job"); err != nil || h.Held {
		t.Fatalf("holder after release = %+v, %v", h, err)
	}
	second, err := b.Acquire(ctx, "job", time.Second)
	if err != nil || second.Token != first.Token+1 {
		t.Fatalf("acquire after release: %+v, %v", second, err)
	}
}

// concurrentRounds runs rounds of 40 simultaneous acquires, one Locker per
// goroutine taken from lockers, and checks each round has exactly one
// winner and the winners' tokens strictly increase.
func concurrentRounds(t *testing.T, lockers []*lock.Locker) {
	const rounds = 15
	ctx := context.Background()
	var last int64
	for round := range rounds {
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners []*lock.Lease
			errs    []error
		)
		start := make(chan struct{})
		for _, l := range lockers {
			wg.Go(func() {
				<-start
				lease, err := l.Acquire(ctx, "account-42", 10*time.Second)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					winners = append(winners, lease)
				case !errors.Is(err, lock.ErrHeld):
					errs = append(errs, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("round %d: %d acquires failed other than held: %v", round, len(errs), errs[0])
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d winners among %d, want exactly 1", round, len(winners), len(lockers))
		}
		w := winners[0]
		if w.Token <= last {
			t.Fatalf("round %d: token %d after %d, want strictly increasing", round, w.Token, last)
		}
		last = w.Token
		if ok, err := lockers[0].Release(ctx, w); err != nil || !ok {
			t.Fatalf("round %d: release: %v, %v", round, ok, err)
		}
	}
	if last != rounds {
		t.Fatalf("last token %d after %d rounds, want %d: a token was issued to a loser", last, rounds, rounds)
	}
}

func TestConcurrentAcquiresOnOneClientHaveExactlyOneWinnerPerRound(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s, func(o *redis.Options) { o.PoolSize = 40 })
	l := newLockerOn(t, s, c, lock.WithCounterTokens()) // the last check counts tokens
	lockers := make([]*lock.Locker, 40)
	for i := range lockers {
		lockers[i] = l
	}
	concurrentRounds(t, lockers)
}

func TestConcurrentAcquiresOnSeparateClientsHaveExactlyOneWinnerPerRound(t *testing.T) {
	s := redistest.Start(t)
	lockers := make([]*lock.Locker, 40)
	for i := range lockers {
		lockers[i] = newLocker(t, s, lock.WithCounterTokens()) // the last check counts tokens
	}
	concurrentRounds(t, lockers)
}

func TestReleaseAfterExpiryDoesNotDeleteNextHoldersLock(t *testing.T) {
	s := redistest.Start(t)
	first, second, third := newLocker(t, s), newLocker(t, s), newLocker(t, s)
	ctx := context.Background()

	stale := mustAcquire(t, first, "account-42", 300*time.Millisecond)
	waitGone(t, first, "account-42", 2*time.Second) // the work overran its lease
	next := mustAcquire(t, second, "account-42", 10*time.Second)

	released, err := first.Release(ctx, stale)
	if err != nil {
		t.Fatal(err)
	}
	if released {
		t.Fatal("the stale holder's release reported success: it deleted the next holder's lock")
	}
	h, err := third.Holder(ctx, "account-42")
	if err != nil || !h.Held || h.Token != next.Token {
		t.Fatalf("holder after the stale release = %+v, %v; want the next holder, token %d", h, err, next.Token)
	}
	if _, err := third.Acquire(ctx, "account-42", time.Second); !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("a third worker: %v, want ErrHeld", err)
	}
}

// The same sequence against SET NX PX + bare DEL: the stale holder's DEL
// removes the next holder's lock and a third worker walks in.
func TestNaiveReleaseAfterExpiryDeletesNextHoldersLock(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	n := naivelock.New(c, s.Prefix()+"naive:")
	ctx := context.Background()

	if ok, err := n.Acquire(ctx, "account-42", 300*time.Millisecond); err != nil || !ok {
		t.Fatalf("first: %v, %v", ok, err)
	}
	waitFor(t, 2*time.Second, "naive lock expired", func() bool {
		return c.Exists(ctx, s.Prefix()+"naive:account-42").Val() == 0
	})
	if ok, err := n.Acquire(ctx, "account-42", 10*time.Second); err != nil || !ok {
		t.Fatalf("second: %v, %v", ok, err)
	}
	if err := n.Release(ctx, "account-42"); err != nil { // the first worker's cleanup
		t.Fatal(err)
	}
	ok, err := n.Acquire(ctx, "account-42", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatal("the naive lock held: expected the bare DEL to let a third worker in")
	}
	t.Log("naive: the first worker's DEL deleted the second worker's lock; a third worker acquired while the second still works")
}

func TestExtendKeepsLiveLeasePastOriginalExpiry(t *testing.T) {
	s := redistest.Start(t)
	l, other := newLocker(t, s), newLocker(t, s)
	ctx := context.Background()
	const ttl = 200 * time.Millisecond

	lease := mustAcquire(t, l, "job", ttl)
	firstSent := lease.RequestedAt
	originalExpiry := time.Now().Add(ttl)
	// Extend well before expiry, several times, until long past the original one.
	for time.Now().Before(originalExpiry.Add(2 * ttl)) {
		time.Sleep(ttl / 4)
		if err := l.Extend(ctx, lease, ttl); err != nil {
			t.Fatalf("extend: %v", err)
		}
		if _, err := other.Acquire(ctx, "job", ttl); !errors.Is(err, lock.ErrHeld) {
			t.Fatalf("another acquire while extended: %v, want ErrHeld", err)
		}
	}
	if !lease.RequestedAt.After(firstSent) || lease.TTL != ttl {
		t.Fatalf("Extend did not record the renewal: %+v", lease)
	}
	if ok, err := l.Release(ctx, lease); err != nil || !ok {
		t.Fatalf("release after extends: %v, %v", ok, err)
	}
}

func TestExtendAfterExpiryFailsAndDoesNotResurrect(t *testing.T) {
	s := redistest.Start(t)
	l := newLocker(t, s)
	ctx := context.Background()

	lease := mustAcquire(t, l, "job", 300*time.Millisecond)
	waitGone(t, l, "job", 2*time.Second)
	before := lease.RequestedAt
	if err := l.Extend(ctx, lease, 10*time.Second); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("extend after expiry: %v, want ErrNotHeld", err)
	}
	if lease.RequestedAt != before {
		t.Fatal("a failed extend changed the lease")
	}
	if h, err := l.Holder(ctx, "job"); err != nil || h.Held {
		t.Fatalf("the expired lock came back: %+v, %v", h, err)
	}
	if n := s.Client(t).Exists(ctx, lockKey(s, "job")).Val(); n != 0 {
		t.Fatalf("lock key exists after a failed extend")
	}
}

func TestExtendCannotExtendAnotherHoldersLock(t *testing.T) {
	s := redistest.Start(t)
	a, b := newLocker(t, s), newLocker(t, s)
	ctx := context.Background()

	stale := mustAcquire(t, a, "job", 300*time.Millisecond)
	waitGone(t, a, "job", 2*time.Second)
	current := mustAcquire(t, b, "job", 300*time.Millisecond)

	if err := a.Extend(ctx, stale, time.Hour); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("extend of a stale lease: %v, want ErrNotHeld", err)
	}
	h, err := b.Holder(ctx, "job")
	if err != nil || h.Token != current.Token || h.TTL > 300*time.Millisecond {
		t.Fatalf("holder = %+v, %v: the stale extend touched the current holder's lock", h, err)
	}
}
