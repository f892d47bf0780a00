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
// when the server wakes: it takes a permit. The Issuer gives that permit
// back by its own id once the server answers, long before its TTL, and
// leaves the other holder's permit alone.
func TestAcquireThatTimedOutOnAFrozenServerIsGivenBackOnceTheServerWakes(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	i := newIssuer(t, s)
	const ttl = 5 * time.Second
	other := mustAcquire(t, i, "job", 2, ttl) // also loads the script, as on a server in use
	s.Freeze(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err := i.Acquire(ctx, "job", 2, ttl)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire on a frozen server: %v, want its deadline", err)
	}
	s.Thaw(t)
	thawed := time.Now()
	c := s.Client(t)
	// The counter moves only when a permit is granted: the lost acquire ran.
	waitFor(t, ttl, "the timed-out acquire ran once the server woke", func() bool {
		v, err := c.Get(context.Background(), permitsKey(s, "job")+":token").Int64()
		return err == nil && v > other.Token
	})
	waitFor(t, ttl, "the orphaned permit was given back", func() bool {
		h := holders(t, i, "job")
		return len(h) == 1 && h[0].ID == other.ID
	})
	back := time.Since(thawed)
	t.Logf("a timed-out acquire's permit was given back %v after the thaw (ttl %v); the other holder's permit is untouched", back, ttl)
	if back > time.Second {
		t.Fatalf("given back %v after the thaw, want well within the TTL %v", back, ttl)
	}
	if err := i.Extend(context.Background(), other, ttl); err != nil {
		t.Fatalf("the other holder's permit: %v", err)
	}
}
