package clienttest_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// While Redis Cluster moves a slot, its keys move one at a time: a script
// on two keys of the slot that sit on two nodes is refused with TRYAGAIN
// (it did not run) for as long as they do, far longer than a client's own
// few retries. The runner sends it again until its context ends, and it
// runs once when the keys are together again; a client that gave up at
// once, or that ran it on the node with half its keys, would fail or lose
// writes during every resharding.
func TestConformanceAScriptOnKeysAMigrationSplitWaitsAndRunsOnceTheyAreTogether(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t)
		rdb := cl.Client(t)
		c := k.cluster(t, cl)
		bg := context.Background()
		keys := []string{"{split}runs", "{split}moved"} // confCount INCRs KEYS[1]; KEYS[2] only routes
		for _, key := range keys {
			if err := rdb.Set(bg, key, 0, 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		from, to, abandon := cl.BeginSlotMigration(t, keys[0])
		// One key moved to the importing node: the slot's keys sit on two
		// nodes, as in the middle of a resharding.
		src := from.Client(t)
		if err := src.Migrate(bg, "127.0.0.1", strconv.Itoa(to.Port()), keys[1], 0, 5*time.Second).Err(); err != nil {
			t.Fatalf("MIGRATE %s: %v", keys[1], err)
		}

		const within = 300 * time.Millisecond
		ctx, cancel := context.WithTimeout(bg, within)
		start := time.Now()
		r := confCount.Run(ctx, c, keys)
		took := time.Since(start)
		cancel()
		refused := confErrorstat(t, src, "TRYAGAIN")
		t.Logf("while the keys are split: %v after %v; the source node answered TRYAGAIN %d times", r.Err, took, refused)
		if msg, _ := luascripts.ReplyMessage(r.Err); !strings.HasPrefix(msg, "TRYAGAIN") && !errors.Is(r.Err, context.DeadlineExceeded) {
			t.Errorf("a call on keys split by a migration: %v, %v; want TRYAGAIN or its context's deadline", r.Val, r.Err)
		}
		// The runner's pause before a resend doubles up to 32 ms, and it
		// does not start one it cannot finish: it gives up at most that
		// long before the deadline.
		if took < within-50*time.Millisecond || refused < 2 {
			t.Errorf("the call ended after %v, refused %d times; want it sent again until its %v context ended", took, refused, within)
		}
		if n := confCounted(t, src, keys[0]); n != 0 {
			t.Errorf("a call refused with TRYAGAIN ran %d times", n)
		}

		// A call made while the keys are split, then the migration
		// abandoned (the slot stays on its owner): it runs once.
		done := make(chan luascripts.Reply, 1)
		later := confCtx(t)
		go func() { done <- confCount.Run(later, c, keys) }()
		for deadline := time.Now().Add(5 * time.Second); confErrorstat(t, src, "TRYAGAIN") == refused; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the second call was not refused with TRYAGAIN within 5s")
			}
		}
		abandon()
		r = <-done
		if n, err := r.Int64(); err != nil || n != 1 {
			t.Errorf("a call refused while the keys were split, then let through: %d, %v; want 1", n, err)
		}
		if n := confCounted(t, src, keys[0]); n != 1 {
			t.Errorf("it ran %d times; want once", n)
		}
	})
}

// A client's slot table is stale once a slot has moved: its next call goes
// to the old owner, which answers MOVED (the script did not run). The call
// follows it and runs once, on the new owner, alone and in a batch.
func TestConformanceACallToASlotsOldOwnerFollowsMovedAndRunsOnce(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t)
		rdb := cl.Client(t)
		c := k.cluster(t, cl)
		ctx := confCtx(t)
		key := "{moved}n"
		others := confKeysOnOtherPrimaries(t, cl, key)
		if n, err := confCount.Run(ctx, c, []string{key}).Int64(); err != nil || n != 1 {
			t.Fatalf("before the move: %d, %v", n, err) // and the client has the slot table
		}

		from, to := cl.MoveSlot(t, key, 0)
		if n, err := confCount.Run(ctx, c, []string{key}).Int64(); err != nil || n != 2 {
			t.Errorf("a call after its slot moved: %d, %v; want 2", n, err)
		}
		t.Logf("after the move from %s to %s, the old owner answered MOVED %d times", from.Addr(), to.Addr(), confErrorstat(t, from.Client(t), "MOVED"))

		from, to = cl.MoveSlot(t, key, 0)
		batch := []luascripts.Call{{Script: confCount, Keys: []string{key}}}
		for _, o := range others {
			batch = append(batch, luascripts.Call{Script: confCount, Keys: []string{o}})
		}
		luascripts.Send(ctx, c, batch)
		if n, err := batch[0].Result().Int64(); err != nil || n != 3 {
			t.Errorf("a batch's call after its slot moved again: %d, %v; want 3", n, err)
		}
		for i, o := range others {
			if n, err := batch[1+i].Result().Int64(); err != nil || n != 1 {
				t.Errorf("the batch's call on %s, on another primary: %d, %v; want 1", o, n, err)
			}
		}
		t.Logf("after the move from %s to %s, the old owner answered MOVED %d times", from.Addr(), to.Addr(), confErrorstat(t, from.Client(t), "MOVED"))
		if n := confCounted(t, rdb, key); n != 3 {
			t.Errorf("the key's calls ran %d times; want 3", n)
		}
	})
}

// A call that comes by ASK to a node importing a slot may touch every key
// of the slot, those still on the source node too, which the node then
// creates anew: ratelimit's batch script, routed by one key and touching
// others, would write them on the wrong node. A NoAsk script is therefore
// never sent where an ASK points: the ASK is its error, and it did not
// run. A script without NoAsk follows the ASK and runs once.
func TestConformanceANoAskScriptIsNotSentWhereAnAskPoints(t *testing.T) {
	noAsk := luascripts.NewWithoutAsk("count", confCountSrc)
	eachClient(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t)
		rdb := cl.Client(t)
		c := k.cluster(t, cl)
		ctx := confCtx(t)
		key := "{ask}n"
		other := confKeysOnOtherPrimaries(t, cl, key)[0]
		confLoad(t, rdb, confCount) // on every primary: the batch below is sent with Eval, which may answer NOSCRIPT
		if n, err := confCount.Run(ctx, c, []string{key}).Int64(); err != nil || n != 1 {
			t.Fatalf("before the migration: %d, %v", n, err)
		}
		from, to, _ := cl.BeginSlotMigration(t, key)
		if err := from.Client(t).Migrate(context.Background(), "127.0.0.1", strconv.Itoa(to.Port()), key, 0, 5*time.Second).Err(); err != nil {
			t.Fatalf("MIGRATE %s: %v", key, err)
		}
		isAsk := func(err error) bool {
			msg, _ := luascripts.ReplyMessage(err)
			return strings.HasPrefix(msg, "ASK ")
		}

		if r := noAsk.Run(ctx, c, []string{key}); !isAsk(r.Err) {
			t.Errorf("a NoAsk script whose key moved to the importing node: %v, %v; want the ASK as a *luascripts.ReplyError", r.Val, r.Err)
		}
		batch := []luascripts.Call{{Script: noAsk, Keys: []string{key}}, {Script: confCount, Keys: []string{other}}}
		c.Eval(ctx, batch)
		if !isAsk(batch[0].Err) {
			t.Errorf("a NoAsk call in a batch (Eval): %v, %v; want the ASK", batch[0].Reply, batch[0].Err)
		}
		if n, err := batch[1].Result().Int64(); err != nil || n != 1 {
			t.Errorf("the batch's call on another primary: %d, %v; want 1", n, err)
		}
		if n := confCounted(t, rdb, key); n != 1 {
			t.Fatalf("the NoAsk calls ran: %d runs in all, want 1 (the one before the migration)", n)
		}

		if n, err := confCount.Run(ctx, c, []string{key}).Int64(); err != nil || n != 2 {
			t.Errorf("a script without NoAsk whose key moved to the importing node: %d, %v; want 2, the ASK followed", n, err)
		}
		if n := confCounted(t, rdb, key); n != 2 {
			t.Errorf("the key's calls ran %d times in all; want 2", n)
		}
	})
}

// confKeysOnOtherPrimaries returns a key on each primary of cl but key's.
func confKeysOnOtherPrimaries(t testing.TB, cl *redistest.Cluster, key string) []string {
	t.Helper()
	seen := map[*redistest.Server]bool{cl.PrimaryOf(t, key): true}
	var out []string
	for i := 0; len(out) < 2; i++ {
		if i > 1000 {
			t.Fatal("no keys found on the other primaries")
		}
		k := "other:" + strconv.Itoa(i)
		if p := cl.PrimaryOf(t, k); !seen[p] {
			seen[p] = true
			out = append(out, k)
		}
	}
	return out
}
