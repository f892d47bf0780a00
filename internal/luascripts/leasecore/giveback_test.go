package leasecore

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// A give-back's release that dials a new connection makes every other call
// of a rueidis or valkey-go client wait for that dial, whatever their own
// contexts say: released with the TTL's 30s, it held an HTTP request with
// a 150ms budget for the Dialer's 5s while the server was frozen. Each
// release may take only what the acquire could, and they go on, backing
// off, until the TTL.
func TestAGiveBackHoldsEachReleaseToTheAcquiresOwnTime(t *testing.T) {
	const ttl, each = 600 * time.Millisecond, 50 * time.Millisecond
	var (
		mu    sync.Mutex
		tries []time.Duration
	)
	sent := time.Now()
	GiveBack(sent, ttl, each, func(ctx context.Context) (bool, error) {
		start := time.Now()
		<-ctx.Done() // a server that never answers
		mu.Lock()
		defer mu.Unlock()
		tries = append(tries, time.Since(start))
		return false, ctx.Err()
	})
	// The goroutine ends by the TTL (TestMain's goleak checks it has).
	time.Sleep(ttl + 100*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d releases, each ended after %v", len(tries), tries)
	if len(tries) < 3 {
		t.Fatalf("%d releases in a TTL of %v with %v each: not tried again", len(tries), ttl, each)
	}
	for _, took := range tries {
		if took > 4*each { // the timer's slack on a busy machine; the bug held one for the whole TTL
			t.Fatalf("a release held for %v, the acquire's own time being %v", took, each)
		}
	}
}

// A server slower to answer than the acquire's deadline still gets its
// release: each try after one that got no answer may take twice as long,
// up to the pace's cap (a twentieth of the TTL here, 200ms).
func TestAGiveBackReachesAServerSlowerThanTheAcquiresDeadline(t *testing.T) {
	const ttl, each, slow = 4 * time.Second, 50 * time.Millisecond, 120 * time.Millisecond
	freed := make(chan int, 1)
	tries := 0
	GiveBack(time.Now(), ttl, each, func(ctx context.Context) (bool, error) {
		tries++
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(slow): // the reply of a slow server
			freed <- tries
			return true, nil
		}
	})
	select {
	case n := <-freed:
		t.Logf("freed on try %d (each %v, the server answering in %v)", n, each, slow)
	case <-time.After(ttl):
		t.Fatalf("a server answering in %v never got a release, each try bound by the acquire's %v", slow, each)
	}
}

// After the server answered that it had nothing to give back, the acquire
// may still land (delivered late on a connection that failed): GiveBack
// looks again, at doubling intervals from a twentieth of the TTL up to a
// fifth of it. A grant that landed is freed within a fifth of the TTL, and
// one that never lands costs a handful of releases over the whole TTL.
func TestAGiveBackLooksAgainForAnAcquireThatLandsLate(t *testing.T) {
	const ttl = time.Second
	for _, landsAfter := range []time.Duration{150 * time.Millisecond, 600 * time.Millisecond, 2 * ttl} {
		var (
			mu     sync.Mutex
			calls  int
			freed  time.Time
			sent   = time.Now()
			landed = sent.Add(landsAfter)
		)
		GiveBack(sent, ttl, 0, func(context.Context) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if time.Now().After(landed) {
				freed = time.Now()
				return true, nil
			}
			return false, nil // answered: nothing to give back yet
		})
		time.Sleep(ttl + 100*time.Millisecond) // the goroutine ends by the TTL (goleak checks)
		mu.Lock()
		if freed.IsZero() {
			t.Logf("landing %v after the acquire (past the TTL): %d releases", landsAfter, calls)
		} else {
			t.Logf("landing %v after the acquire: %d releases, freed %v after it landed", landsAfter, calls, freed.Sub(landed))
		}
		switch {
		case landsAfter > ttl && (calls > 10 || !freed.IsZero()):
			t.Errorf("a grant that never landed: %d releases over a TTL of %v, freed %v", calls, ttl, freed)
		case landsAfter < ttl && (freed.IsZero() || freed.Sub(landed) > ttl/5+50*time.Millisecond):
			t.Errorf("a grant that landed %v after the acquire was freed at %v, want within a fifth of the %v TTL", landsAfter, freed.Sub(landed), ttl)
		}
		mu.Unlock()
	}
}

// In an outage every acquire that timed out starts a give-back, and each
// one looks again now and then until its TTL, in case the acquire lands
// late. A goroutine parked for each of them made a service that kept
// taking requests through the outage hold thousands (a goroutine's stack
// is kilobytes; a timer is a few words), and held them for up to a fifth
// of the TTL after its client was closed, where goleak finds them. While
// it waits to look again a give-back holds a timer only.
func TestGiveBacksWaitingToLookAgainHoldNoGoroutine(t *testing.T) {
	const n, ttl = 1000, 20 * time.Second // the next look a second after the first two
	var (
		mu     sync.Mutex
		tries  int
		closed bool
	)
	release := func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return false, luascripts.ErrClosed // the client closed: the give-back ends
		}
		tries++
		return false, nil // answered: nothing to give back yet
	}
	before := runtime.NumGoroutine()
	for range n {
		GiveBack(time.Now(), ttl, time.Millisecond, release)
	}
	for { // each sends two releases at once, then waits a second
		mu.Lock()
		done := tries
		mu.Unlock()
		if done >= 2*n {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	held := runtime.NumGoroutine() - before
	mu.Lock()
	t.Logf("%d give-backs, %d releases sent, waiting to look again: %d goroutines more than before", n, tries, held)
	closed = true
	mu.Unlock()
	if held > n/10 {
		t.Errorf("%d give-backs waiting to look again held %d goroutines", n, held)
	}
}
