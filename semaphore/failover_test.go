package semaphore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
)

// Replication is asynchronous: permits the primary granted and never sent
// on are gone after a failover to a replica that missed them, and the
// promoted replica grants the same places again. Twice the capacity hold
// live permits until the old ones' TTL runs out; the tokens still go up,
// so a fence refuses the older holders once the newer ones write.
func TestFailoverToALaggingReplicaAdmitsTwiceTheCapacityForUpToOneTTL(t *testing.T) {
	primary := redistest.Start(t, redistest.Own())
	replica := primary.StartReplica(t)
	ctx := context.Background()
	const capacity = 3
	replica.Partition(t)
	old := newIssuer(t, primary)
	var oldest []*semaphore.Permit
	for range capacity {
		oldest = append(oldest, mustAcquire(t, old, "pool", capacity, time.Minute))
	}
	primary.Kill(t)
	replica.Promote(t)
	promoted := newIssuer(t, replica)
	var newer []*semaphore.Permit
	for range capacity {
		p, err := promoted.Acquire(ctx, "pool", capacity, time.Minute)
		if err != nil {
			t.Fatalf("the promoted replica refused a place: %v (it should have lost the old permits)", err)
		}
		newer = append(newer, p)
	}
	if _, err := promoted.Acquire(ctx, "pool", capacity, time.Minute); !errors.Is(err, semaphore.ErrFull) {
		t.Fatalf("acquire past the capacity on the promoted replica: %v, want ErrFull", err)
	}
	t.Logf("capacity %d: %d permits still live in their holders' hands (tokens up to %d) and %d granted again by the promoted replica (tokens from %d)",
		capacity, len(oldest), oldest[capacity-1].Token, len(newer), newer[0].Token)
	if newer[0].Token <= oldest[capacity-1].Token {
		t.Fatalf("promoted replica's token %d not above the old %d", newer[0].Token, oldest[capacity-1].Token)
	}
}

// An Acquire sent to a frozen server times out, and the script still runs
// when the server wakes: the permit it took is live, counts against the
// capacity, and is freed by its TTL.
func TestAcquireThatTimedOutOnAFrozenServerTakesAPermitThatExpiresWithItsTTL(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	i := newIssuer(t, s)
	const ttl = 500 * time.Millisecond
	// The server has the script already (EVALSHA finds it on waking), as a
	// server in use does.
	mustRelease(t, i, mustAcquire(t, i, "job", 1, ttl))
	s.Freeze(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err := i.Acquire(ctx, "job", 1, ttl)
	cancel()
	s.Thaw(t)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire on a frozen server: %v, want its deadline", err)
	}
	waitFor(t, ttl, "the timed-out acquire ran once the server woke", func() bool { return len(holders(t, i, "job")) == 1 })
	if _, err := i.Acquire(context.Background(), "job", 1, time.Second); !errors.Is(err, semaphore.ErrFull) {
		t.Fatalf("acquire while the timed-out one's permit lives: %v, want ErrFull", err)
	}
	thawed := time.Now()
	waitFor(t, ttl+time.Second, "the orphaned permit expired", func() bool { return len(holders(t, i, "job")) == 0 })
	t.Logf("a timed-out acquire's permit lived on %v after the thaw (ttl %v)", time.Since(thawed), ttl)
	if took := time.Since(thawed); took > ttl+200*time.Millisecond {
		t.Fatalf("the orphaned permit lived %v after the thaw, past its TTL %v", took, ttl)
	}
}
