package election_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/internal/redistest"
)

// While Redis Cluster moves the election's slot to another node, the
// slot's keys move one at a time, and while the lease and its counter sit
// on two nodes no node can run the script that takes the lease: a
// follower's attempt is refused with TRYAGAIN. It used to wait a
// RetryInterval before trying again (a handover of 17 to 348 ms instead of
// about 1). The refused attempt is now sent again after at most 32 ms, so a
// clean handover ends within a few ms of the moment the lease's keys are on
// one node again, by the migration's end at the latest, not a
// RetryInterval later.
func TestHandoverDuringASlotMigrationEndsWithTheMigrationNotARetryIntervalLater(t *testing.T) {
	cl := redistest.StartCluster(t)
	c := cl.PrimitiveClient(t)
	ctx := context.Background()
	const ttl, renew, retry = 3 * time.Second, 500 * time.Millisecond, time.Second
	// Keys beside the election's in its slot, so a migration lasts long
	// enough for a handover to fall inside it.
	for i := range 20 {
		if err := c.Set(ctx, "{rs}:fill:"+strconv.Itoa(i), "x", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	cfg := func(node string) election.Config {
		return election.Config{Name: "rs", NodeID: node, TTL: ttl, RenewInterval: renew, RetryInterval: retry, Prefix: "rs:"}
	}
	var ds []time.Duration
	for round := range 4 {
		l := startNode(t, c, cfg("leader"), nil)
		l.rec.nth(t, 5*time.Second, "elected", 1)
		f := startNode(t, c, cfg("follower"), nil)
		f.rec.nth(t, 5*time.Second, "follower", 1)
		moved := make(chan time.Time, 1)
		go func() {
			cl.MoveSlot(t, "{rs}", 5*time.Millisecond)
			moved <- time.Now()
		}()
		time.Sleep(30 * time.Millisecond) // into the migration: some keys have moved
		stopped := time.Now()
		if err := l.stop(); err != nil {
			t.Fatal(err)
		}
		won := f.rec.nth(t, ttl, "elected", 1)
		d := won.at.Sub(stopped)
		end := <-moved
		if err := f.stop(); err != nil {
			t.Fatal(err)
		}
		late := won.at.Sub(end)
		t.Logf("round %d: handover during the migration took %.2fms, %.2fms after the migration's end", round, ms(d), ms(late))
		// The migration's end includes waiting for every node to agree;
		// the last retry is at most 32 ms after the keys were together.
		if d > retry/2 || late > 100*time.Millisecond {
			t.Errorf("round %d: handover took %v, %v after the migration ended; want it by the migration's end (+100ms), far less than the RetryInterval %v",
				round, d, late, retry)
		}
		ds = append(ds, d)
	}
	med, lo, hi := stats(ds)
	t.Logf("handover during a slot migration over %d rounds: median %.2fms, min %.2fms, max %.2fms (RetryInterval %v)", len(ds), ms(med), ms(lo), ms(hi), retry)
}
