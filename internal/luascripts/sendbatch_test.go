package luascripts_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// SendBatch sends each call once: a server's refusal for a slot it does
// not serve (MOVED, which a plain client does not follow) ends the call at
// once, where RunBatch would send it again until its time is up, and the
// other calls of the batch run, NOSCRIPT or not.
func TestSendBatchEndsAMovedCallAtOnceAndRunsTheOthers(t *testing.T) {
	cl := redistest.StartCluster(t)
	var here, there string
	node := cl.PrimaryOf(t, "{a}")
	for _, k := range []string{"{b}", "{c}", "{d}", "{e}", "{f}", "{g}"} {
		if cl.PrimaryOf(t, k) != node {
			there = k
			break
		}
	}
	here = "{a}"
	if there == "" {
		t.Fatal("no key of another primary among six")
	}
	c := node.Client(t) // a plain client of one primary: it does not follow MOVED
	incr := luascripts.New("incr-sendbatch", "return redis.call('INCR', KEYS[1])")
	calls := []luascripts.Call{
		{Script: incr, Keys: []string{here}},
		{Script: incr, Keys: []string{there}},
		{Script: incr, Keys: []string{here}},
	}
	start := time.Now()
	luascripts.SendBatch(context.Background(), c.Pipeline, calls)
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Fatalf("SendBatch took %v: a moved call was sent again", took)
	}
	if err := calls[1].Cmd.Err(); !luascripts.Migrating(err) {
		t.Fatalf("the call on another primary's key: %v, want MOVED", err)
	}
	for _, i := range []int{0, 2} {
		if n, err := calls[i].Cmd.Int(); err != nil || n != i/2+1 {
			t.Fatalf("call %d: %d, %v; want %d (each call once, after NOSCRIPT)", i, n, err, i/2+1)
		}
	}
}
