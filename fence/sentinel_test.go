package fence_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// tokenScheme is one way lock issues fencing tokens.
type tokenScheme struct {
	name string
	opts []lock.Option
	// monotonic: a token issued after a failover is above every token
	// issued before it, so not one stale write may be accepted.
	monotonic bool
}

// tokenSchemes returns the token schemes the test runs side by side,
// each with its own lock name and keys: the counter alone
// (lock.WithCounterTokens), which a failover can move backwards, and lock's
// default, max(counter+1, the server's clock in µs), which it must not.
func tokenSchemes() []tokenScheme {
	return []tokenScheme{
		{name: "counter-only", opts: []lock.Option{lock.WithCounterTokens()}},
		{name: "hybrid clock", monotonic: true},
	}
}

// historyLock is the name of the locks, each under a prefix of its own
// (lockPrefix).
const historyLock = "history"

func lockPrefix(scheme, resource int) string { return fmt.Sprintf("s%dr%d:", scheme, resource) }

// What WithReplicas adds, and what remains (issue 15, item 4). WAIT makes a
// lease exist on the replicas that acknowledged it, not on the one Sentinel
// promotes. Here replica B is frozen and cut off while A acknowledges every
// lease (WithReplicas(1), fail closed); A may not be promoted
// (replica-priority 0); the primary dies; Sentinel promotes B, which never
// had the leases. So the lock vanishes: a second holder takes it while the
// first still counts on its lease, two holders for up to one TTL. Counter
// tokens also go back, the second holder gets the first one's token, and
// the fence accepts the first holder's write after the second's. Tokens
// that follow the server's clock give the second holder a higher token, and
// the fence refuses the older holder once the newer one has written.
func TestWithReplicasLeaseVanishesWhenSentinelPromotesAReplicaThatMissedIt(t *testing.T) {
	sen := redistest.StartSentinel(t)
	resource := redistest.Start(t)
	store, err := fence.New(goredisadapter.New(resource.Client(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	primary := sen.Primary(t)
	var a, b *redistest.Server
	for _, s := range sen.Servers() {
		switch {
		case s == primary:
		case a == nil:
			a = s
		default:
			b = s
		}
	}
	if err := a.Client(t).ConfigSet(ctx, "replica-priority", "0").Err(); err != nil {
		t.Fatal(err)
	}
	// B stops reading, then loses its link: it misses everything from here
	// on and, frozen, cannot reconnect. A reconnects and catches up.
	b.Freeze(t)
	pc := primary.Client(t)
	if err := pc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		t.Fatal(err)
	}
	waitCond(t, 10*redistest.SentinelDownAfter, "A back online on the primary", func() bool {
		info, err := pc.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, fmt.Sprintf("port=%d,state=online", a.Port())) &&
			!strings.Contains(info, fmt.Sprintf("port=%d,", b.Port()))
	})

	const ttl = 30 * time.Second // outlives the failover: the first holder still counts on it
	type first struct {
		sc    tokenScheme
		lease *lock.Lease
	}
	var firsts []first
	for si, sc := range tokenSchemes() {
		l, err := lock.New(goredisadapter.New(sen.Client(t)), append([]lock.Option{lock.WithPrefix(lockPrefix(si, 0)),
			lock.WithReplicas(1, time.Second, true)}, sc.opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		lease, err := l.Acquire(ctx, historyLock, ttl)
		if err != nil {
			t.Fatalf("%s: acquire with A acknowledging: %v", sc.name, err)
		}
		if lease.Replicas != 1 {
			t.Fatalf("%s: %d replicas acknowledged, want 1 (A)", sc.name, lease.Replicas)
		}
		firsts = append(firsts, first{sc, lease})
	}

	fo := sen.KillPrimaryThawing(t, b)
	if fo.New != b {
		t.Fatalf("Sentinel promoted %s, want B (%s): A has replica-priority 0", fo.New.Addr(), b.Addr())
	}
	for si, f := range firsts {
		l, err := lock.New(goredisadapter.New(sen.Client(t)), append([]lock.Option{lock.WithPrefix(lockPrefix(si, 0))}, f.sc.opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		var second *lock.Lease
		waitCond(t, 10*redistest.SentinelDownAfter, "the failover client reaches the new primary", func() bool {
			second, err = l.Acquire(ctx, historyLock, ttl)
			return err == nil || errors.Is(err, lock.ErrHeld)
		})
		if err != nil {
			t.Fatalf("%s: the lease A acknowledged survived on B: %v; B was meant to miss it", f.sc.name, err)
		}
		if time.Now().After(f.lease.Deadline(0)) {
			t.Fatalf("%s: the first lease ended before the second holder came", f.sc.name)
		}
		key := store.Key(fmt.Sprintf("%sitem4:%d", resource.Prefix(), si))
		newer := store.Set(ctx, second.Token, key, "second")
		older := store.Set(ctx, f.lease.Token, key, "first")
		t.Logf("%s tokens: first holder %d (acknowledged by A), second holder %d from the promoted B while the first still held; "+
			"fence: the second's write: %v; the first's write after it: %v",
			f.sc.name, f.lease.Token, second.Token, newer, older)
		if newer != nil {
			t.Fatalf("%s: the second holder's write: %v", f.sc.name, newer)
		}
		if f.sc.monotonic {
			if second.Token <= f.lease.Token || !errors.Is(older, fence.ErrStale) {
				t.Errorf("%s: second token %d not above first %d, or the older holder's write not refused (%v)",
					f.sc.name, second.Token, f.lease.Token, older)
			}
		} else if second.Token != f.lease.Token || older != nil {
			t.Errorf("%s: want the first holder's token reissued (%d, got %d) and its stale write accepted (%v)",
				f.sc.name, f.lease.Token, second.Token, older)
		}
	}
}

// waitCond polls cond until it holds or within passes; it fails t then.
func waitCond(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
