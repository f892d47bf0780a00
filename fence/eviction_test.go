package fence_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// Memory pressure on a server that evicts, as a cache sharing it makes
// (ADR 0029): holder A takes 50 locks and writes each resource once through
// the fence; the server fills up and evicts; holder B takes every lock it
// can and writes; the server evicts again; A, still inside its one-minute
// lease, writes with its token.
type evictionRun struct {
	stolen        int // locks B took while A held them
	staleAccepted int // A's writes accepted after B's
	refused       int // writes refused with ErrEvictingPolicy
}

const evictionLocks = 50

func playEviction(t *testing.T, s *redistest.Server, store *fence.Store, cacheTTL time.Duration) evictionRun {
	t.Helper()
	c := s.Client(t)
	ctx := context.Background()
	p := s.Prefix()
	locker := newLocker(t, c, p)
	var r evictionRun
	write := func(token int64, i int, who string) (accepted bool) {
		err := store.Set(ctx, token, fmt.Sprintf("%s{job%d}", p, i), who)
		switch {
		case errors.Is(err, fence.ErrEvictingPolicy):
			r.refused++
		case errors.Is(err, fence.ErrStale):
		case err != nil:
			t.Fatalf("%s's write: %v", who, err)
		}
		return err == nil
	}
	held := make([]*lock.Lease, evictionLocks)
	for i := range held {
		var err error
		if held[i], err = locker.Acquire(ctx, fmt.Sprint("job", i), time.Minute); err != nil {
			t.Fatal(err)
		}
		write(held[i].Token, i, "A")
	}
	redistest.FillMemory(t, c, p+"cache1:", cacheTTL)
	newer := make([]*lock.Lease, evictionLocks)
	for i := range newer {
		b, err := locker.Acquire(ctx, fmt.Sprint("job", i), time.Minute)
		if errors.Is(err, lock.ErrHeld) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		r.stolen++
		newer[i] = b
		write(b.Token, i, "B")
	}
	evicted := redistest.FillMemory(t, c, p+"cache2:", cacheTTL)
	for i, a := range held {
		if newer[i] != nil && write(a.Token, i, "A") {
			r.staleAccepted++
		}
	}
	t.Logf("evicted_keys %d; %d of %d held locks taken by a second holder; %d stale writes accepted; %d writes refused for the policy",
		evicted, r.stolen, evictionLocks, r.staleAccepted, r.refused)
	return r
}

func newStoreOn(t *testing.T, s *redistest.Server, opts ...fence.Option) *fence.Store {
	t.Helper()
	store, err := fence.New(goredisadapter.New(s.Client(t)), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// The failure the refusal prevents, kept: a Store that read noeviction at
// its first write goes on writing for its recheck interval after the
// server is switched to allkeys-lru (here made an hour long), and the
// marks it relies on are evicted with the rest.
func TestAnAllkeysServerEvictsMarksAndAcceptsStaleWritesFromAStoreThatDoesNotLook(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	store := newStoreOn(t, s)
	fence.RecheckPolicyEvery(store, time.Hour)
	admin := s.Client(t)
	if err := store.Set(context.Background(), 1, s.Prefix()+"{warm-up}", "x"); err != nil {
		t.Fatal(err)
	}
	if err := admin.ConfigSet(context.Background(), "maxmemory-policy", "allkeys-lru").Err(); err != nil {
		t.Fatal(err)
	}
	r := playEviction(t, s, store, 0)
	if r.stolen == 0 || r.staleAccepted == 0 {
		t.Fatalf("%d locks stolen, %d stale writes accepted: the eviction this guards against did not happen", r.stolen, r.staleAccepted)
	}
}

func TestAStoreRefusesEveryWriteOnAnAllkeysServerSoNoEvictedMarkAcceptsAStaleOne(t *testing.T) {
	for _, policy := range []string{"allkeys-lru", "allkeys-lfu", "allkeys-random"} {
		t.Run(policy, func(t *testing.T) {
			s := redistest.Start(t, redistest.Own(), redistest.Args("--maxmemory-policy", policy))
			r := playEviction(t, s, newStoreOn(t, s), 0)
			if r.staleAccepted != 0 || r.refused != evictionLocks+r.stolen+r.stolen {
				t.Fatalf("%d stale writes accepted, %d of %d writes refused; want none accepted, all refused",
					r.staleAccepted, r.refused, evictionLocks+2*r.stolen)
			}
		})
	}
}

// A volatile-* policy evicts only keys with a TTL: the leases go (mutual
// exclusion is lost under memory pressure, which the lock's doc says), the
// marks stay, and the older holder's writes are refused as stale.
func TestOnAVolatileServerAnEvictedLeaseIsTakenButItsOlderHolderStillCannotWrite(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--maxmemory-policy", "volatile-lru"))
	r := playEviction(t, s, newStoreOn(t, s), time.Hour)
	if r.stolen == 0 {
		t.Fatal("no lease was evicted: the memory pressure did not happen")
	}
	if r.staleAccepted != 0 || r.refused != 0 {
		t.Fatalf("%d stale writes accepted, %d refused for the policy; want 0 and 0", r.staleAccepted, r.refused)
	}
}
