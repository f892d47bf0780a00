package lock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// The failure the refusal prevents, kept: a Locker WithCounterTokens that
// read noeviction goes on issuing counter tokens for its recheck interval
// (here an hour) after the server is switched to allkeys-lru; memory
// pressure evicts the counter, and the next token is one already handed
// out, which every fence accepts.
func TestAnAllkeysServerEvictsTheCounterAndReissuesATokenToALockerThatDoesNotLook(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--appendonly", "yes"))
	c := client(t, s)
	ctx := context.Background()
	l := newLockerOn(t, s, c, lock.WithCounterTokens())
	lock.RecheckPolicyEvery(l, time.Hour)
	var last int64
	for range 3 {
		lease, err := l.Acquire(ctx, "job", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		last = lease.Token
		if _, err := l.Release(ctx, lease); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err(); err != nil {
		t.Fatal(err)
	}
	// Redis's LRU clock counts seconds, so a counter used in the same second
	// as the cache's writes is no older than they are: an eviction may pass
	// it by. Fill until it goes (each round makes about 800 evictions among
	// about 250 keys).
	for round := range 5 {
		evicted := redistest.FillMemory(t, c, fmt.Sprintf("%scache%d:", s.Prefix(), round), 0)
		lease, err := l.Acquire(ctx, "job", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: evicted_keys %d; token %d after the eviction, %d before it", round, evicted, lease.Token, last)
		if lease.Token <= last {
			return // reissued: the failure the refusal prevents
		}
		last = lease.Token
		if _, err := l.Release(ctx, lease); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the counter survived five rounds of eviction: the failure did not happen")
}

func TestCounterTokensAreRefusedOnAnAllkeysServerAndDefaultTokensAreNot(t *testing.T) {
	ctx := context.Background()
	for _, policy := range []string{"allkeys-lru", "volatile-lru", "noeviction"} {
		t.Run(policy, func(t *testing.T) {
			s := redistest.Start(t, redistest.Own(), redistest.Args("--maxmemory-policy", policy))
			_, err := newLocker(t, s, lock.WithCounterTokens()).Acquire(ctx, "job", time.Minute)
			if refused := errors.Is(err, lock.ErrEvictingPolicy); refused != (policy == "allkeys-lru") {
				t.Fatalf("counter tokens on %s: %v", policy, err)
			}
			if err != nil && !errors.Is(err, lock.ErrEvictingPolicy) {
				t.Fatalf("counter tokens on %s: %v", policy, err)
			}
			if _, err := newLocker(t, s).Acquire(ctx, "job2", time.Minute); err != nil {
				t.Fatalf("default tokens on %s: %v", policy, err)
			}
		})
	}
}
