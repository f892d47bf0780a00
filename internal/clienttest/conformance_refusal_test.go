package clienttest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// After a restart, a failover or a SCRIPT FLUSH the server no longer knows
// a script: EVALSHA is refused with NOSCRIPT, which proves the script did
// not run, and the call is sent again with the source. A client that
// treated NOSCRIPT as a failure would fail every call after a restart; one
// that sent the source while the first send might have run would run it
// twice. Each call must run once, alone, in a batch and with WAIT.
func TestConformanceAScriptTheServerForgotRunsOnceFromItsSource(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		c := k.server(t, srv)
		ctx := confCtx(t)
		key, other := srv.Prefix()+"n", srv.Prefix()+"other"
		flush := func() {
			t.Helper()
			if err := rdb.ScriptFlush(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
		}
		want := func(step string, r luascripts.Reply, n int64) {
			t.Helper()
			if got, err := r.Int64(); err != nil || got != n {
				t.Errorf("%s: %d, %v; want %d", step, got, err, n)
			}
			if got := confCounted(t, rdb, key); got != n {
				t.Errorf("%s: the server ran the script %d times in all; want %d", step, got, n)
			}
		}

		flush()
		want("Run of a script the server never saw", confCount.Run(ctx, c, []string{key}), 1)
		want("Run again, the script now known", confCount.Run(ctx, c, []string{key}), 2)

		flush()
		batch := []luascripts.Call{
			{Script: confCount, Keys: []string{key}},
			{Script: confCount, Keys: []string{other}},
			{Script: confCount, Keys: []string{key}},
		}
		luascripts.Send(ctx, c, batch)
		want("the batch's last call on the key, after SCRIPT FLUSH", batch[2].Result(), 4)
		if n, err := batch[1].Result().Int64(); err != nil || n != 1 || confCounted(t, rdb, other) != 1 {
			t.Errorf("the batch's call on another key: %d, %v, ran %d times; want 1, once", n, err, confCounted(t, rdb, other))
		}

		flush()
		r, _, err := confCount.RunWait(ctx, c, []string{key}, nil, 0, 100*time.Millisecond)
		if err != nil {
			t.Errorf("RunWait after SCRIPT FLUSH: WAIT failed: %v", err)
		}
		want("RunWait after SCRIPT FLUSH", r, 5)

		// Eval itself may follow NOSCRIPT, or return it for the runner to
		// send the source: either way the script ran once at most.
		flush()
		call := []luascripts.Call{{Script: confCount, Keys: []string{key}}}
		c.Eval(ctx, call)
		switch re := confReplyError(call[0].Err); {
		case call[0].Err == nil:
			want("Eval after SCRIPT FLUSH, NOSCRIPT followed by the client", call[0].Result(), 6)
		case re != nil && strings.HasPrefix(re.Message, "NOSCRIPT"):
			if n := confCounted(t, rdb, key); n != 5 {
				t.Errorf("Eval answered NOSCRIPT, but the script ran: %d runs in all, want 5", n)
			}
		default:
			t.Errorf("Eval after SCRIPT FLUSH: %v, %v; want its reply, or NOSCRIPT as a *luascripts.ReplyError", call[0].Reply, call[0].Err)
		}
	})
}

// A write sent to a replica (a client pointed at one, or at a primary just
// demoted by a failover) is refused with READONLY before it writes
// anything. The contract lets the client follow it or return it as a
// *ReplyError; a client of one server cannot follow it, and must not turn
// it into anything else, nor run the write anywhere. A read-only script
// runs on the replica: that is what EVALSHA_RO is for.
func TestConformanceAWriteSentToAReplicaIsRefusedWithReadonlyAndDoesNotRun(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t, redistest.Own())
		replica := srv.StartReplica(t)
		rdb := srv.Client(t)
		c := k.server(t, replica)
		ctx := confCtx(t)
		key := srv.Prefix() + "n"

		r := confCount.Run(ctx, c, []string{key})
		switch re := confReplyError(r.Err); {
		case r.Err == nil:
			// Followed to the primary, somehow: then it ran there once.
			if n := confCounted(t, rdb, key); n != 1 {
				t.Errorf("the write succeeded through the replica but ran %d times on the primary; want 1", n)
			}
		case re != nil && strings.HasPrefix(re.Message, "READONLY"):
			if n := confCounted(t, rdb, key); n != 0 {
				t.Errorf("the write was refused with READONLY but ran %d times", n)
			}
		default:
			t.Errorf("a write sent to a replica: %v, %v; want READONLY as a *luascripts.ReplyError", r.Val, r.Err)
		}
		t.Logf("a write sent to a replica: %v", r.Err)

		// With WAIT, which a replica refuses too: the call's Err is the
		// script's refusal, err WAIT's own.
		ran := confCounted(t, rdb, key)
		call := luascripts.Call{Script: confCount, Keys: []string{key}}
		acked, err := c.EvalWait(ctx, &call, 1, 100*time.Millisecond)
		t.Logf("EvalWait on a replica: the call %v; WAIT %d, %v", call.Err, acked, err)
		switch n := confCounted(t, rdb, key) - ran; {
		case call.Err == nil && n != 1:
			t.Errorf("EvalWait of a write through a replica succeeded but ran %d times on the primary; want 1", n)
		case call.Err != nil && !strings.HasPrefix(confMessage(call.Err), "READONLY"):
			t.Errorf("EvalWait of a write on a replica: %v, %v; want READONLY as a *luascripts.ReplyError", call.Reply, call.Err)
		case call.Err != nil && n != 0:
			t.Errorf("EvalWait's write was refused with READONLY but ran %d times", n)
		case call.Err != nil && err == nil:
			t.Errorf("EvalWait on a replica, which refuses WAIT: acked %d, no error; want WAIT's refusal", acked)
		}

		if err := rdb.Set(context.Background(), key, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.Do(context.Background(), "WAIT", 1, 5000).Err(); err != nil {
			t.Fatal(err)
		}
		if v, err := confRead.Run(ctx, c, []string{key}).Text(); err != nil || v != "v" {
			t.Errorf("a read-only script on the replica: %q, %v; want \"v\"", v, err)
		}
	})
}

// A replica that resyncs from its primary (after a failover, or a
// replication backlog outrun) loads the primary's data, and refuses every
// command meanwhile with LOADING: the script did not run. The client may
// wait it out or send the call again, or return LOADING as a *ReplyError;
// it must not report it as anything else, nor run a write. Here the
// replica loads 2000 keys at 1 ms each, answering LOADING for 2 s.
func TestConformanceACallToAReplicaLoadingItsDataIsRefusedWithLoadingOrWaitsItOut(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t, redistest.Own())
		replica := srv.StartReplica(t)
		rdb, rr := srv.Client(t), replica.Client(t)
		bg := context.Background()
		key := srv.Prefix() + "n"
		if err := rdb.Eval(bg, "for i = 1, 2000 do redis.call('SET', KEYS[1]..i, i) end redis.call('SET', KEYS[1], 'v') return 1", []string{key}).Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.Do(bg, "WAIT", 1, 5000).Err(); err != nil {
			t.Fatal(err)
		}
		c := k.server(t, replica)
		if _, err := c.Time(confCtx(t)); err != nil {
			t.Fatal(err) // connected before the replica starts loading
		}

		// key-load-delay (µs per key) slows the load; a small events
		// interval lets the replica answer LOADING while it loads, as a
		// replica loading a large dataset does.
		for _, kv := range [][2]string{{"key-load-delay", "1000"}, {"loading-process-events-interval-bytes", "1024"}} {
			if err := rr.ConfigSet(bg, kv[0], kv[1]).Err(); err != nil {
				t.Fatal(err)
			}
		}
		info, err := rr.Info(bg, "replication").Result()
		if err != nil {
			t.Fatal(err)
		}
		var host, port string
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "master_host:"); ok {
				host = v
			}
			if v, ok := strings.CutPrefix(line, "master_port:"); ok {
				port = v
			}
		}
		// Detached and attached again, the replica has a replication id
		// its primary does not know: a full resync, and a load.
		if err := rr.Do(bg, "REPLICAOF", "NO", "ONE").Err(); err != nil {
			t.Fatal(err)
		}
		if err := rr.Do(bg, "REPLICAOF", host, port).Err(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(2 * time.Millisecond) {
			p, err := rr.Info(bg, "persistence").Result()
			if err == nil && strings.Contains(p, "loading:1") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the replica did not start loading within 5s")
			}
		}

		ctx := confCtx(t)
		r := confRead.Run(ctx, c, []string{key})
		w := confCount.Run(ctx, c, []string{key + ":w"})
		refused := confErrorstat(t, rr, "LOADING")
		t.Logf("while the replica loads: a read %v, %v; a write %v; the replica answered LOADING %d times", r.Val, r.Err, w.Err, refused)
		if refused == 0 {
			t.Fatal("no call met LOADING: the test proves nothing")
		}
		if msg := confMessage(r.Err); !strings.HasPrefix(msg, "LOADING") && (r.Err != nil || r.Val != "v") {
			t.Errorf("a read while the replica loads: %v, %v; want \"v\" once loaded, or LOADING as a *luascripts.ReplyError", r.Val, r.Err)
		}
		if msg := confMessage(w.Err); !strings.HasPrefix(msg, "LOADING") && !strings.HasPrefix(msg, "READONLY") {
			t.Errorf("a write while the replica loads: %v, %v; want LOADING, or READONLY once loaded, as a *luascripts.ReplyError", w.Val, w.Err)
		}
		if n := confCounted(t, rdb, key+":w"); n != 0 {
			t.Errorf("the write ran %d times", n)
		}
	})
}
