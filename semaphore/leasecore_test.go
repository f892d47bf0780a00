package semaphore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
)

// A TTL of 2ms leaves nothing once the default safety margin (TTL/100 +
// 2ms) is taken off: the permit's deadline would have passed when it was
// granted. lock refuses it; so does semaphore, before any round trip (the
// client points at nothing).
func TestATTLThatLeavesNoTimeAfterTheSafetyMarginIsRefusedAsLocksIs(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer rdb.Close()
	i, err := semaphore.New(goredisadapter.New(rdb))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := i.Acquire(ctx, "x", 1, 2*time.Millisecond); !errors.Is(err, semaphore.ErrInvalidTTL) {
		t.Errorf("Acquire for 2ms: %v, want ErrInvalidTTL", err)
	}
	if _, err := i.AcquireWait(ctx, "x", 1, 2*time.Millisecond); !errors.Is(err, semaphore.ErrInvalidTTL) {
		t.Errorf("AcquireWait for 2ms: %v, want ErrInvalidTTL", err)
	}
}

// A permit that arrives with less than one renew interval left (an acquire
// the client resent while the server came back up) must be proven before
// anyone acts on it. Here it is already gone: Keep says so at once, with
// ErrPermitLost, instead of handing out a context for a permit that
// lapsed.
func TestKeepOfALatePermitThatIsGoneReturnsErrPermitLostBeforeAnyoneActs(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s)
	ctx := context.Background()
	const ttl = time.Second
	p := mustAcquire(t, i, "job", 1, ttl)
	if ok, err := i.Release(ctx, p); err != nil || !ok {
		t.Fatalf("release: %v, %v", ok, err)
	}
	p.RequestedAt = p.RequestedAt.Add(-ttl + 100*time.Millisecond) // as if its reply came 900ms late
	k, err := i.Keep(ctx, p, ttl/3)
	if err == nil {
		defer k.Stop()
		t.Fatalf("Keep of a late permit that is gone: a Keeper (context error %v), want ErrPermitLost", k.Context().Err())
	}
	if !errors.Is(err, semaphore.ErrPermitLost) || !errors.Is(err, semaphore.ErrNotHeld) {
		t.Fatalf("Keep of a late permit that is gone: %v, want ErrPermitLost and ErrNotHeld", err)
	}
}

// RDB snapshots alone lose the counters' increments since the last
// snapshot on a restart, as lock's Preflight reports; semaphore's says so
// in the same words.
func TestPreflightReportsSnapshotsOnlyAsLocksDoes(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--save", "3600 1"))
	r, err := newIssuer(t, s).Preflight(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("problems: %q", r.Problems)
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "RDB snapshots only") || !strings.Contains(r.Problems[0], "server's clock alone") {
		t.Fatalf("problems %q, want the snapshot-only warning, with tokens resting on the server's clock", r.Problems)
	}
}
