package semaphore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/naivesemaphore"
	"github.com/redis-primitives/go/semaphore"
)

// Two holders of a semaphore of capacity 2 crash: their clients close and
// nothing is released. The INCR/DECR semaphore has lost both places for
// good; the leased one gives them back at the permits' expiry, and a waiter
// holds one within milliseconds of it.
func TestACrashedHoldersPermitLeaksForeverWithIncrDecrAndReturnsWithinItsTTLWithLeases(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	const capacity, ttl = 2, 300 * time.Millisecond

	naive := naivesemaphore.New(s.Client(t), s.Prefix()+"naive:")
	crashedClient := s.Client(t)
	crashed := newIssuerOn(t, s, goredisadapter.New(crashedClient))
	var expiry time.Time
	for range capacity {
		if ok, err := naive.Acquire(ctx, "exports", capacity); err != nil || !ok {
			t.Fatalf("naive acquire: %v, %v", ok, err)
		}
		p := mustAcquire(t, crashed, "exports", capacity, ttl)
		if expiry.IsZero() {
			// The first permit's: a place comes back when the first of
			// them expires, which a loaded machine puts milliseconds
			// before the second's.
			expiry = p.RequestedAt.Add(ttl)
		}
	}
	if err := crashedClient.Close(); err != nil { // the crash: no Release, no DECR
		t.Fatal(err)
	}

	waiter := newIssuer(t, s, semaphore.WithWaitBackoff(10*time.Second, 10*time.Second))
	p, err := waiter.AcquireWait(ctx, "exports", capacity, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	late := time.Since(expiry)
	// The naive one, checked over five times the TTL: still full.
	leaked := true
	for end := time.Now().Add(5 * ttl); time.Now().Before(end); time.Sleep(ttl / 3) {
		if ok, err := naive.Acquire(ctx, "exports", capacity); err != nil || ok {
			leaked = false
		}
	}
	t.Logf("capacity %d, both holders crashed: leased permit held again %v after the first crashed one's expiry (ttl %v, fallback 10s); INCR/DECR still full %v after the crash",
		capacity, late, ttl, 5*ttl)
	if !leaked {
		t.Fatal("the naive semaphore gave a place back without a DECR: the test proves nothing")
	}
	// The server counts the TTL from after RequestedAt: holding earlier
	// than the expiry would be a bug. The waiter sleeps until the expiry
	// the server told it (its fallback is 10 s), then one round trip: a few
	// milliseconds on an idle machine, 152 ms once with make test's
	// modules and another suite on two cores; within one TTL it is the
	// expiry that woke it.
	if late < 0 || late > ttl {
		t.Fatalf("held %v after the expiry, want within one TTL (%v) of it", late, ttl)
	}
	second, err := waiter.Acquire(ctx, "exports", capacity, 30*time.Second)
	if err != nil {
		t.Fatalf("the second crashed permit did not come back: %v", err)
	}
	if _, err := waiter.Acquire(ctx, "exports", capacity, time.Second); !errors.Is(err, semaphore.ErrFull) {
		t.Fatalf("third acquire on capacity %d: %v, want ErrFull", capacity, err)
	}
	mustRelease(t, waiter, p)
	mustRelease(t, waiter, second)
}
