package semaphore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
)

// The basic contract: capacity permits and no more, each with a larger
// token; a release frees a place; Holders lists exactly the live permits.
func TestCapacityPermitsAreGrantedAndTheNextIsRefusedUntilARelease(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s, semaphore.WithOwner("node a"))
	ctx := context.Background()
	var permits []*semaphore.Permit
	for n := range 3 {
		p := mustAcquire(t, i, "exports", 3, 10*time.Second)
		if n > 0 && p.Token <= permits[n-1].Token {
			t.Fatalf("token %d after %d", p.Token, permits[n-1].Token)
		}
		permits = append(permits, p)
	}
	_, err := i.Acquire(ctx, "exports", 3, 10*time.Second)
	var full *semaphore.FullError
	if !errors.As(err, &full) || !errors.Is(err, semaphore.ErrFull) {
		t.Fatalf("fourth acquire on capacity 3: %v, want a *FullError", err)
	}
	if full.Holders != 3 || full.Capacity != 3 || full.Expires <= 9*time.Second || full.Expires > 10*time.Second {
		t.Fatalf("FullError %+v: want 3 live of 3, the first expiring in about 10s", full)
	}
	h := holders(t, i, "exports")
	if len(h) != 3 {
		t.Fatalf("holders %+v, want 3", h)
	}
	for n, hh := range h {
		if hh.ID != permits[n].ID || hh.Token != permits[n].Token || hh.Owner != "node a" || hh.TTL <= 9*time.Second || !hh.Granted.Equal(permits[n].Granted) {
			t.Fatalf("holder %d = %+v, want the permit %+v", n, hh, permits[n])
		}
	}
	mustRelease(t, i, permits[1])
	if ok, err := i.Release(ctx, permits[1]); ok || err != nil {
		t.Fatalf("second release of one permit: %v, %v; want false", ok, err)
	}
	p := mustAcquire(t, i, "exports", 3, 10*time.Second)
	if p.Token <= permits[2].Token {
		t.Fatalf("token %d after a release, want above %d", p.Token, permits[2].Token)
	}
	// Another name is another semaphore.
	mustAcquire(t, i, "imports", 1, time.Second)
}

// Capacity is per call. A lower capacity refuses new permits while more
// are live, and takes none from their holders; a higher one admits more.
func TestLoweringTheCapacityRefusesNewPermitsAndLeavesTheHoldersAboveIt(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s)
	ctx := context.Background()
	var permits []*semaphore.Permit
	for range 4 {
		permits = append(permits, mustAcquire(t, i, "workers", 4, 10*time.Second))
	}
	var full *semaphore.FullError
	if _, err := i.Acquire(ctx, "workers", 2, time.Second); !errors.As(err, &full) || full.Holders != 4 || full.Capacity != 2 {
		t.Fatalf("capacity 2 with 4 live: %v, want ErrFull with 4 live", err)
	}
	for _, p := range permits {
		if err := i.Extend(ctx, p, 10*time.Second); err != nil {
			t.Fatalf("a holder above the lowered capacity lost its permit: %v", err)
		}
	}
	mustRelease(t, i, permits[0])
	mustRelease(t, i, permits[1])
	if _, err := i.Acquire(ctx, "workers", 2, time.Second); !errors.Is(err, semaphore.ErrFull) {
		t.Fatalf("capacity 2 with 2 live: %v, want ErrFull", err)
	}
	mustRelease(t, i, permits[2])
	mustAcquire(t, i, "workers", 2, time.Second)
	mustAcquire(t, i, "workers", 5, time.Second) // raised: 3 live, 5 allowed
}

// An expired permit is not live: it is not counted, Extend does not bring
// it back, and Release reports that it had been lost.
func TestAnExpiredPermitCannotBeExtendedOrReleasedAndItsPlaceIsFree(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s)
	ctx := context.Background()
	const ttl = 50 * time.Millisecond
	old := mustAcquire(t, i, "job", 1, ttl)
	waitFor(t, ttl+time.Second, "the permit expired", func() bool { return len(holders(t, i, "job")) == 0 })
	if err := i.Extend(ctx, old, time.Minute); !errors.Is(err, semaphore.ErrNotHeld) {
		t.Fatalf("extend of an expired permit: %v, want ErrNotHeld", err)
	}
	if ok, err := i.Release(ctx, old); ok || err != nil {
		t.Fatalf("release of an expired permit: %v, %v; want false", ok, err)
	}
	p := mustAcquire(t, i, "job", 1, time.Second)
	if p.Token <= old.Token {
		t.Fatalf("token %d after %d", p.Token, old.Token)
	}
	if err := i.Extend(ctx, old, time.Minute); !errors.Is(err, semaphore.ErrNotHeld) {
		t.Fatalf("extend of an expired permit once the place is taken: %v", err)
	}
	if h := holders(t, i, "job"); len(h) != 1 || h[0].ID != p.ID {
		t.Fatalf("holders %+v, want only the new permit", h)
	}
}

// A client resends a script whose reply it lost. The acquire carries the
// permit id chosen before it was sent, so running it twice takes one
// permit. Replayed here by sending the same script twice with the same id.
func TestAnAcquireResentByTheClientTakesOnePermit(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s)
	ctx := context.Background()
	p := mustAcquire(t, i, "job", 2, 10*time.Second)
	again, err := semaphore.ResendAcquire(ctx, i, p)
	if err != nil || again.Token != p.Token || again.ID != p.ID {
		t.Fatalf("resent acquire: %+v, %v; want the same permit, token %d", again, err, p.Token)
	}
	if h := holders(t, i, "job"); len(h) != 1 {
		t.Fatalf("%d live permits after one acquire sent twice, want 1", len(h))
	}
}

// Every key but the counter has a TTL, the longest permit's, so an
// abandoned semaphore leaves only its counter behind.
func TestEveryKeyButTheCounterExpiresWithTheLongestPermit(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s)
	c := s.Client(t)
	ctx := context.Background()
	mustAcquire(t, i, "job", 3, 200*time.Millisecond)
	long := mustAcquire(t, i, "job", 3, 400*time.Millisecond)
	// a waiter's mark, too: the waiter marks on its first attempt after its
	// subscription is in effect, which takes a connection of its own; its
	// deadline leaves time for that and ends before the 200ms permit
	// expires and frees a place.
	waitCtx, cancel := context.WithTimeout(ctx, 120*time.Millisecond)
	defer cancel()
	mustAcquire(t, i, "job", 3, 300*time.Millisecond)
	if _, err := i.AcquireWait(waitCtx, "job", 3, time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("AcquireWait on a full semaphore: %v, want its deadline", err)
	}
	base := permitsKey(s, "job")
	for _, k := range []string{base, base + ":holders", base + ":waiting"} {
		pttl, err := c.PTTL(ctx, k).Result()
		if err != nil || pttl <= 0 || pttl > 400*time.Millisecond {
			t.Fatalf("PTTL %s = %v, %v; want ≤ the longest permit's 400ms", k, pttl, err)
		}
	}
	if pttl := c.PTTL(ctx, base+":token").Val(); pttl != -1 {
		t.Fatalf("counter PTTL %v, want none (-1)", pttl)
	}
	waitFor(t, 2*time.Second, "the keys expired", func() bool {
		n, err := c.Exists(ctx, base, base+":holders", base+":waiting").Result()
		return err == nil && n == 0
	})
	t.Logf("permits of 200, 300 and 400ms: every key but the counter gone by %v after the last grant", time.Since(long.RequestedAt))
}
