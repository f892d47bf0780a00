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
