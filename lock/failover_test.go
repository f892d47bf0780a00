package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// Replication is asynchronous: a lock the primary acknowledged and never
// sent on is gone after a failover, and so is the counter's last increment,
// so the promoted replica hands the same token to a second holder.
func TestFailoverToALaggingReplicaLosesTheLockAndReissuesItsToken(t *testing.T) {
	primary := redistest.Start(t, redistest.Own())
	replica := primary.StartReplica(t)
	ctx := context.Background()
	a := newLocker(t, primary, lock.WithCounterTokens(), lock.WithOwner("a"))

	// Token 1 reaches the replica (WAIT), then is released.
	first := mustAcquire(t, a, "job", 10*time.Second)
	if ok, err := a.Release(ctx, first); err != nil || !ok {
		t.Fatalf("release: %v, %v", ok, err)
	}
	if n, err := client(t, primary).Wait(ctx, 1, 2*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT before the partition: %d, %v", n, err)
	}

	// Token 2 is acknowledged by the primary only.
	replica.Partition(t)
	held := mustAcquire(t, a, "job", 10*time.Second)
	if held.Token != 2 {
		t.Fatalf("token %d, want 2", held.Token)
	}
	// The opt-in WAIT would have refused to hand it out.
	strict := newLocker(t, primary, lock.WithOwner("strict"), lock.WithReplicas(1, 100*time.Millisecond, true))
	if _, err := strict.Acquire(ctx, "other", 10*time.Second); !errors.Is(err, lock.ErrNotReplicated) {
		t.Fatalf("fail-closed acquire through a cut link: %v, want ErrNotReplicated", err)
	}

	primary.Kill(t)
	replica.Promote(t)
	b := newLocker(t, replica, lock.WithCounterTokens(), lock.WithOwner("b"))
	second, err := b.Acquire(ctx, "job", 10*time.Second)
	if err != nil {
		t.Fatalf("after failover, a's live lease should be gone: %v", err)
	}
	t.Logf("a holds token %d (lease live for ~10s), b was just given token %d by the promoted replica", held.Token, second.Token)
	if second.Token != held.Token {
		t.Fatalf("b got token %d; the counter should have moved back and reissued %d", second.Token, held.Token)
	}
}
