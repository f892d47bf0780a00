package ratelimit_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// Redis Cluster moves a slot's keys to another node one at a time, so for
// a moment a Policy's states sit on two nodes and its script is refused
// with TRYAGAIN: it did not run, and the decision reached the caller as an
// error. Moving the slot in use back and forth while Policies are decided
// on it, no call may fail, and the server must count exactly what callers
// were told was admitted.
//
// Batched, go-redis's ClusterClient re-sends a node's whole pipeline when
// its first reply is TRYAGAIN, and queues a command it was also
// redirecting (MOVED) a second time: the copy is sent as a no-op (once.go),
// the script runs once, and that call reports ErrReplyLost. Batched, then,
// a call may fail that way and no other, and the count must stay between
// what was admitted and that plus the failures.
func TestPolicyDecisionsDoNotFailWhileTheirSlotMigrates(t *testing.T) {
	cl := redistest.StartCluster(t)
	c := cl.PrimitiveClient(t)
	ctx := context.Background()
	// User keys whose states share one slot, so that every migration moves them.
	slot, err := c.ClusterKeySlot(ctx, "{u0}").Result()
	if err != nil {
		t.Fatal(err)
	}
	users := []string{"u0"}
	for i := 1; len(users) < 8; i++ {
		u := "u" + strconv.Itoa(i)
		if s, err := c.ClusterKeySlot(ctx, "{"+u+"}").Result(); err != nil {
			t.Fatal(err)
		} else if s == slot {
			users = append(users, u)
		}
	}
	log := ratelimit.SlidingLog(1_000_000, time.Hour) // its members count what was admitted
	p := ratelimit.Policy{ratelimit.GCRA(1_000_000, time.Second, 1_000_000), log}
	for name, batch := range map[string]int{"unbatched": 0, "batched": 16} {
		opts := []ratelimit.Option{ratelimit.WithPrefix("rs" + name + ":")}
		if batch > 0 {
			opts = append(opts, ratelimit.WithBatching(batch))
		}
		l, err := ratelimit.New(c, opts...)
		if err != nil {
			t.Fatal(err)
		}
		var admitted, failed, lost atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					res, err := l.Allow(cctx, users[i%len(users)], p)
					cancel()
					switch {
					case batch > 0 && errors.Is(err, ratelimit.ErrReplyLost):
						lost.Add(1)
					case err != nil:
						failed.Add(1)
						t.Logf("%s: %v", name, err)
					case res.Allowed:
						admitted.Add(1)
					}
				}
			}()
		}
		const moves = 6
		for range moves {
			cl.MoveSlot(t, "{u0}", time.Millisecond)
		}
		close(stop)
		wg.Wait()
		counted := int64(0)
		for _, u := range users {
			n, err := c.ZCard(ctx, "rs"+name+":{"+u+"}:l1000000:1h").Result()
			if err != nil {
				t.Fatal(err)
			}
			counted += n
		}
		a, f, r := admitted.Load(), failed.Load(), lost.Load()
		t.Logf("%s: %d migrations of slot %d: %d admitted, %d failed, %d ErrReplyLost; the server counted %d", name, moves, slot, a, f, r, counted)
		if a == 0 {
			t.Fatalf("%s: nothing was decided during the migrations", name)
		}
		if f != 0 || counted < a || counted > a+r {
			t.Fatalf("%s: %d calls failed while their slot migrated (and %d ErrReplyLost); %d admitted, %d counted", name, f, r, a, counted)
		}
	}
}

// In a slot being migrated, a key its node does not have is another
// node's, and a script that writes one fails ("Script attempted to access a
// non local key") after whatever it wrote before. A sliding log whose only
// member a call removed and wrote again deleted its key between the two:
// an Allow after a rejection (which had renamed that member) failed so,
// alone and in a Policy, where the Policy's other limit was already
// charged. Each write that adds comes before the one that removes, so the
// key is never deleted in a call that then writes it.
func TestSlidingLogDecisionDoesNotFailOnItsOwnDeletedKeyInAMigratingSlot(t *testing.T) {
	cl := redistest.StartCluster(t)
	c := cl.PrimitiveClient(t)
	ctx := context.Background()
	log := ratelimit.SlidingLog(2, time.Minute)
	for i, tc := range []struct {
		name  string
		rule  ratelimit.Rule
		batch int
	}{
		{"log", log, 0},
		{"policy", ratelimit.Policy{ratelimit.GCRA(10, time.Minute, 10), log}, 0},
		{"log batched", log, 4},
		{"policy batched", ratelimit.Policy{ratelimit.GCRA(10, time.Minute, 10), log}, 4},
	} {
		opts := []ratelimit.Option{ratelimit.WithPrefix("mig" + strconv.Itoa(i) + ":")}
		if tc.batch > 0 {
			opts = append(opts, ratelimit.WithBatching(tc.batch))
		}
		l, err := ratelimit.New(c, opts...)
		if err != nil {
			t.Fatal(err)
		}
		const user = "m" // its keys' hash tag: {m}
		if res, err := l.Allow(ctx, user, tc.rule); err != nil || !res.Allowed {
			t.Fatalf("%s: first Allow: %+v, %v", tc.name, res, err)
		}
		if res, err := l.AllowN(ctx, user, tc.rule, 2); err != nil || res.Allowed {
			t.Fatalf("%s: AllowN(2) with one left: %+v, %v, want a rejection", tc.name, res, err)
		}
		_, _, abandon := cl.BeginSlotMigration(t, "{"+user+"}")
		res, err := l.Allow(ctx, user, tc.rule)
		abandon()
		if err != nil || !res.Allowed {
			t.Errorf("%s: Allow with one left, its slot migrating: %+v, %v, want allowed", tc.name, res, err)
		}
		if res, err := l.Allow(ctx, user, tc.rule); err != nil || res.Allowed {
			t.Errorf("%s: a third Allow of 2: %+v, %v, want a rejection", tc.name, res, err)
		}
	}
}

// Settling a reservation replaces its record's member with a tombstone.
// Removing the member first deleted the record when it was the only one,
// and in a slot being migrated the tombstone's write then failed, after
// what the commit gave back had been written: the commit reported an
// error though it had partly taken effect.
func TestCommitDoesNotFailOnItsOwnDeletedRecordInAMigratingSlot(t *testing.T) {
	cl := redistest.StartCluster(t)
	c := cl.PrimitiveClient(t)
	ctx := context.Background()
	l, err := ratelimit.New(c, ratelimit.WithPrefix("migrsv:"))
	if err != nil {
		t.Fatal(err)
	}
	const user = "r" // its keys' hash tag: {r}
	for _, rule := range []ratelimit.Rule{ratelimit.GCRA(100, time.Minute, 100), ratelimit.SlidingLog(100, time.Minute)} {
		rs, err := l.Reserve(ctx, user, rule, 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		_, _, abandon := cl.BeginSlotMigration(t, "{"+user+"}")
		res, err := rs.Commit(ctx, 4)
		abandon()
		if err != nil {
			t.Errorf("%v: Commit with its slot migrating: %v", rule, err)
			continue
		}
		if res.Remaining != 96 {
			t.Errorf("%v: Commit(4) of 10 reserved: %d remaining, want 96", rule, res.Remaining)
		}
	}
}

// A Reserve first releases its rule's reservations past their expiry,
// removing them from the rule's record. When they were all it held, the
// record was deleted, and in a slot being migrated the new reservation's
// write to it then failed, after its amount had been charged: the call
// reported an error, and the charge stood with no reservation to settle
// or expire (90 of 100 left instead of 100). The record now keeps a
// placeholder member instead of being emptied.
func TestReserveDoesNotFailOnItsEmptiedRecordInAMigratingSlot(t *testing.T) {
	cl := redistest.StartCluster(t)
	c := cl.PrimitiveClient(t)
	ctx := context.Background()
	const user = "e" // its keys' hash tag: {e}
	for i, rule := range []ratelimit.Rule{ratelimit.GCRA(100, time.Minute, 100), ratelimit.SlidingCounter(100, time.Minute)} {
		l, err := ratelimit.New(c, ratelimit.WithPrefix("migexp"+strconv.Itoa(i)+":"))
		if err != nil {
			t.Fatal(err)
		}
		const ttl = 50 * time.Millisecond
		if _, err := l.Reserve(ctx, user, rule, 10, ttl); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * ttl) // past its expiry on the server's clock too
		_, _, abandon := cl.BeginSlotMigration(t, "{"+user+"}")
		rs, err := l.Reserve(ctx, user, rule, 10, time.Minute)
		abandon()
		if err != nil {
			t.Errorf("%v: Reserve after the only reservation expired, its slot migrating: %v", rule, err)
			continue
		}
		if res, err := l.Peek(ctx, user, rule); err != nil || res.Remaining != 90 {
			t.Errorf("%v: after the expired reservation's release and a new one of 10: %d remaining, %v; want 90", rule, res.Remaining, err)
		}
		if _, err := rs.Cancel(ctx); err != nil {
			t.Errorf("%v: Cancel: %v", rule, err)
		}
		if res, err := l.Peek(ctx, user, rule); err != nil || res.Remaining != 100 {
			t.Errorf("%v: after Cancel: %d remaining, %v; want 100", rule, res.Remaining, err)
		}
	}
}
