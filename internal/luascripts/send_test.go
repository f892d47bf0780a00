package luascripts_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// incrBoth increments two keys of one slot; while the slot is half moved
// and one of them is on neither node yet, the owner refuses it with
// TRYAGAIN, and it has not run.
var incrBoth = luascripts.New("incr-both", "redis.call('INCR', KEYS[1]) return redis.call('INCR', KEYS[2])")

var incr = luascripts.New("incr", "return redis.call('INCR', KEYS[1])")

// migrating starts a cluster, sets {m}a and leaves the slot of {m} half
// moved, so that incrBoth on {m}a and {m}b answers TRYAGAIN until abandon
// is called.
func migrating(t *testing.T) (c *redistest.Cluster, rdb *redis.ClusterClient, abandon func()) {
	t.Helper()
	c = redistest.StartCluster(t)
	rdb = c.Client(t)
	// One call first, so that the calls under test find the node dialled
	// and the script loaded: on a busy machine a first call's setup took
	// longer than a 200 ms deadline, and ended before any TRYAGAIN.
	if err := incrBoth.Run(context.Background(), goredisadapter.New(rdb), []string{"{m}a", "{m}b"}).Err; err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(context.Background(), "{m}b").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(context.Background(), "{m}a", 0, 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, _, abandon = c.BeginSlotMigration(t, "{m}a")
	return c, rdb, abandon
}

// A multi-key call in a slot being moved is refused with TRYAGAIN, which
// a client sends again only a few times within microseconds: Send keeps
// sending it until the migration lets it run, and it runs once.
func TestSendWaitsOutAMigratingSlotAndTheCallRunsOnce(t *testing.T) {
	_, rdb, abandon := migrating(t)
	client := goredisadapter.New(rdb)
	ctx := context.Background()
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelShort()
	if err := incrBoth.Run(short, client, []string{"{m}a", "{m}b"}).Err; !luascripts.Migrating(err) {
		t.Fatalf("a two-key call in a half-moved slot, for 200 ms: %v, want TRYAGAIN", err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		abandon()
	}()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	n, err := incrBoth.Run(ctx, client, []string{"{m}a", "{m}b"}).Int()
	if err != nil || n != 1 {
		t.Fatalf("after the migration was abandoned: %d, %v; want 1", n, err)
	}
	t.Logf("the call ran %v after it was first refused", time.Since(start).Round(time.Millisecond))
	if a, _ := rdb.Get(ctx, "{m}a").Int(); a != 1 {
		t.Fatalf("{m}a = %d, want 1: the refused sends ran", a)
	}
}

// The resends end with the call's deadline, not after it, and without a
// deadline after migrationWait (2 s): a call never waits for a migration
// without end.
func TestSendStopsResendingAtTheCallsDeadline(t *testing.T) {
	_, rdb, _ := migrating(t)
	client := goredisadapter.New(rdb)
	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	err := incrBoth.Run(ctx, client, []string{"{m}a", "{m}b"}).Err
	took := time.Since(start)
	t.Logf("refused until its %v deadline: returned after %v with %v", deadline, took.Round(time.Millisecond), err)
	if !luascripts.Migrating(err) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want TRYAGAIN or the deadline", err)
	}
	// Pauses double up to 32 ms, and a pause that would end past the
	// deadline is not taken: it returns before the deadline plus one
	// round trip, with slack for -race on busy cores.
	if took > deadline+500*time.Millisecond {
		t.Fatalf("returned %v after its %v deadline", took-deadline, deadline)
	}
	if took < deadline/2 {
		t.Fatalf("gave up after %v of its %v: it did not wait the migration out", took, deadline)
	}

	start = time.Now()
	err = incrBoth.Run(context.Background(), client, []string{"{m}a", "{m}b"}).Err
	took = time.Since(start)
	t.Logf("without a deadline: returned after %v with %v", took.Round(time.Millisecond), err)
	if !luascripts.Migrating(err) || took < time.Second || took > 4*time.Second {
		t.Fatalf("without a deadline: %v after %v; want TRYAGAIN after about 2 s", err, took)
	}
}

// A batch in which one call is refused: the others keep their replies at
// their places, and the refused call's reply lands at its own once it
// runs, though the server lost every script meanwhile (its resend answers
// NOSCRIPT and goes with its source).
func TestSendPutsEveryReplyOfABatchInItsPlaceAcrossResends(t *testing.T) {
	_, rdb, abandon := migrating(t)
	client := goredisadapter.New(rdb)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	calls := []luascripts.Call{
		{Script: incr, Keys: []string{"{x}1"}},
		{Script: incrBoth, Keys: []string{"{m}a", "{m}b"}},
		{Script: incr, Keys: []string{"{x}1"}},
		{Script: incrBoth, Keys: []string{"{m}a", "{m}b"}},
		{Script: incr, Keys: []string{"{y}1"}},
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		if err := rdb.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			return n.ScriptFlush(ctx).Err()
		}); err != nil {
			t.Error(err)
		}
		abandon()
	}()
	luascripts.Send(ctx, client, calls)
	for i, want := range []int64{1, 1, 2, 2, 1} {
		if n, err := calls[i].Result().Int64(); err != nil || n != want {
			t.Errorf("call %d: %d, %v; want %d", i, n, err, want)
		}
	}
	if a, _ := rdb.Get(ctx, "{m}a").Int(); a != 2 {
		t.Fatalf("{m}a = %d after two calls, want 2", a)
	}
}

// A script that must not follow an ASK (a batch script whose first key
// routes it and which touches keys it did not declare) ends with the ASK
// at once, having run nowhere; an ordinary script follows the ASK to the
// importing node.
func TestSendEndsANoAskCallAtTheAskAndFollowsItForOthers(t *testing.T) {
	_, rdb, _ := migrating(t)
	client := goredisadapter.New(rdb)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	noAsk := luascripts.NewWithoutAsk("incr-noask", "return redis.call('INCR', KEYS[1])")
	start := time.Now()
	err := noAsk.Run(ctx, client, []string{"{m}absent"}).Err
	if msg, _ := luascripts.ReplyMessage(err); !strings.HasPrefix(msg, "ASK ") {
		t.Fatalf("a NoAsk call on a key the migrating owner lacks: %v, want ASK", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("the ASK took %v: it was sent again", took)
	}
	if n, err := incr.Run(ctx, client, []string{"{m}absent"}).Int(); err != nil || n != 1 {
		t.Fatalf("an ordinary call on the same key: %d, %v; want 1, run on the importing node", n, err)
	}
}

// After a SCRIPT FLUSH every call of a batch answers NOSCRIPT and goes once
// more with its source, and each runs exactly once.
func TestSendFallsBackToEvalForEveryCallAfterScriptFlush(t *testing.T) {
	s := redistest.Start(t)
	rdb := s.Client(t)
	client := goredisadapter.New(rdb)
	ctx := context.Background()
	key := s.Prefix() + "n"
	get := luascripts.NewReadOnly("get", "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])")
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	calls := make([]luascripts.Call, 20)
	for i := range calls {
		calls[i] = luascripts.Call{Script: incr, Keys: []string{key}}
	}
	calls = append(calls, luascripts.Call{Script: get, Keys: []string{key}})
	luascripts.Send(ctx, client, calls)
	for i := range 20 {
		if n, err := calls[i].Result().Int(); err != nil || n != i+1 {
			t.Fatalf("call %d: %d, %v; want %d", i, n, err, i+1)
		}
	}
	if v, err := calls[20].Result().Text(); err != nil || v != "20" {
		t.Fatalf("the read after them: %q, %v; want 20", v, err)
	}
}

// Every call of a batch a 6.2 server refuses says it needs Redis 7.
func TestSendSaysEachCallARedis62RefusedNeedsRedis7(t *testing.T) {
	s := redistest.Start(t)
	r := redistest.StartRedis62(t, s.Addr())
	client := goredisadapter.New(s.Client(t, func(o *redis.Options) { o.Addr = r.Addr() }))
	ro := luascripts.NewReadOnly("get", "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])")
	calls := []luascripts.Call{
		{Script: ro, Keys: []string{s.Prefix() + "a"}},
		{Script: incr, Keys: []string{s.Prefix() + "b"}},
		{Script: ro, Keys: []string{s.Prefix() + "c"}},
	}
	luascripts.Send(context.Background(), client, calls)
	for _, i := range []int{0, 2} {
		if !errors.Is(calls[i].Err, luascripts.ErrRedisTooOld) {
			t.Errorf("read-only call %d on 6.2: %v, want ErrRedisTooOld", i, calls[i].Err)
		}
	}
	if n, err := calls[1].Result().Int(); err != nil || n != 1 {
		t.Errorf("a plain write on 6.2: %d, %v; want 1", n, err)
	}
}

// RunWait sends the script and its WAIT again after NOSCRIPT, and WAIT
// counts the replica that has the script's write.
func TestRunWaitFallsBackToEvalAndWaitsOnTheWritesConnection(t *testing.T) {
	s := redistest.Start(t)
	s.StartReplica(t)
	rdb := s.Client(t)
	client := goredisadapter.New(rdb)
	ctx := context.Background()
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	reply, acked, err := incr.RunWait(ctx, client, []string{s.Prefix() + "w"}, nil, 1, 2*time.Second)
	if n, rerr := reply.Int(); rerr != nil || n != 1 || err != nil || acked != 1 {
		t.Fatalf("RunWait after SCRIPT FLUSH: %d, %v; WAIT %d, %v; want 1 run and 1 replica", n, rerr, acked, err)
	}
}
