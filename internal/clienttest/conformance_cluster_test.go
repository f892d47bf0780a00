package clienttest_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// A batch on a Cluster is split by the primary of each call's first key,
// and the parts' replies put back in the calls' places. A client that
// mixed them up would hand one caller another's decision; one that
// reordered a server's part would run a key's calls out of order (a
// rate limit's charges, a lock's release before its acquire). Calls with
// no key go anywhere and still get their own replies.
func TestConformanceAClusterBatchGivesEachCallItsOwnReplyInOrderPerServer(t *testing.T) {
	// Each call logs its ARGV[1] in KEYS[2], the log of its slot, and
	// answers its own key and argument.
	logged := luascripts.New("logged", "redis.call('RPUSH', KEYS[2], ARGV[1]); return {KEYS[1], ARGV[1]}")
	echo := luascripts.New("echo", "return ARGV[1]")
	eachClient(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t)
		rdb := cl.Client(t)
		c := k.cluster(t, cl)
		ctx := confCtx(t)
		confLoad(t, rdb, logged, echo) // on every primary: Eval may answer NOSCRIPT, which this test is not about
		tags := append([]string{"{a}"}, confKeysOnOtherPrimaries(t, cl, "{a}")...)
		for i, o := range tags[1:] {
			tags[1+i] = "{" + o + "}"
		}

		var batch []luascripts.Call
		want := map[string][]string{} // each tag's log, in call order
		for i := range 24 {
			arg := strconv.Itoa(i)
			if i%4 == 3 {
				batch = append(batch, luascripts.Call{Script: echo, Args: []any{arg}})
				continue
			}
			tag := tags[i%3]
			key := tag + "k" + arg // a key of its own, in its tag's slot
			batch = append(batch, luascripts.Call{Script: logged, Keys: []string{key, tag + "log"}, Args: []any{arg}})
			want[tag] = append(want[tag], arg)
		}
		c.Eval(ctx, batch)
		for i, call := range batch {
			var wantReply any = strconv.Itoa(i)
			if call.Script == logged {
				wantReply = []any{call.Keys[0], strconv.Itoa(i)}
			}
			if call.Err != nil || !reflect.DeepEqual(call.Reply, wantReply) {
				t.Errorf("call %d: %#v, %v; want %#v", i, call.Reply, call.Err, wantReply)
			}
		}
		for _, tag := range tags {
			got, err := rdb.LRange(context.Background(), tag+"log", 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want[tag]) {
				t.Errorf("the calls on %s's primary ran in the order %q; want the batch's, %q", tag, got, want[tag])
			}
		}

		// Alone, a call with no key, and one per primary.
		for i, call := range []luascripts.Call{{Script: echo, Args: []any{"alone"}}, {Script: logged, Keys: []string{tags[1] + "x", tags[1] + "log"}, Args: []any{"alone"}}} {
			one := []luascripts.Call{call}
			c.Eval(ctx, one)
			if one[0].Err != nil || one[0].Reply == nil {
				t.Errorf("a call alone (%d): %#v, %v", i, one[0].Reply, one[0].Err)
			}
		}
	})
}

// Primary tells the primitives which calls share a server, so that a
// batch of calls for one key goes to one node (ratelimit's per-node
// batching): two keys of one slot must be named the same server, keys on
// different primaries different ones; a client that cannot tell says
// ErrNoRoute rather than guess. A client of one server names "".
func TestConformancePrimaryNamesOneServerPerSlotAndTheServersApart(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		if p, err := k.server(t, srv).Primary(confCtx(t), "any"); p != "" || err != nil {
			t.Errorf("Primary on a client of one server: %q, %v; want \"\"", p, err)
		}

		cl := redistest.StartCluster(t)
		c := k.cluster(t, cl)
		ctx := confCtx(t)
		keys := append([]string{"{p}a"}, confKeysOnOtherPrimaries(t, cl, "{p}a")...)
		same, err := c.Primary(ctx, "{p}b")
		if errors.Is(err, luascripts.ErrNoRoute) {
			for _, key := range keys {
				if p, err := c.Primary(ctx, key); !errors.Is(err, luascripts.ErrNoRoute) {
					t.Errorf("Primary(%q): %q, %v after ErrNoRoute for another key; want ErrNoRoute for every key", key, p, err)
				}
			}
			t.Logf("%s routes calls itself: Primary answers ErrNoRoute", k.name)
			return
		}
		if err != nil || same == "" {
			t.Fatalf("Primary(%q): %q, %v; want a server's name", "{p}b", same, err)
		}
		named := map[string]string{}
		for _, key := range keys {
			p, err := c.Primary(ctx, key)
			if err != nil || p == "" {
				t.Fatalf("Primary(%q): %q, %v; want a server's name", key, p, err)
			}
			if other, ok := named[p]; ok {
				t.Errorf("Primary names %q for %q and %q, which are on different primaries", p, other, key)
			}
			named[p] = key
		}
		if p, _ := c.Primary(ctx, keys[0]); p != same {
			t.Errorf("Primary names %q for %q and %q for %q, of the same slot", p, keys[0], same, "{p}b")
		}
	})
}
