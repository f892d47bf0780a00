package clienttest_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// Preflight tells a user whose ACL forbids the read-only scripts which
// command to allow, from the NOPERM reply (luascripts.RefusedScript). A
// client that wrapped the reply in an error of its own kind, or reworded
// it, would turn that into an unexplained failure. The same for a write's
// NOPERM, and for CONFIG GET's (Durability).
func TestConformanceNOPERMIsAReplyErrorThatRefusedScriptReads(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		bg := context.Background()
		user := "noscripts" + srv.Prefix()
		if err := rdb.Do(bg, "ACL", "SETUSER", user, "on", ">pw", "~*", "&*", "+@all",
			"-evalsha", "-eval", "-evalsha_ro", "-eval_ro", "-config").Err(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rdb.Do(bg, "ACL", "DELUSER", user).Err() })
		c := k.client(t, target{addrs: []string{srv.Addr()}, username: user, password: "pw"})
		ctx := confCtx(t)
		key := srv.Prefix() + "n"

		r := confRead.Run(ctx, c, []string{key})
		re := confReplyError(r.Err)
		if re == nil || !strings.HasPrefix(re.Message, "NOPERM") {
			t.Errorf("a read-only script the user may not run: %v (%T); want a *luascripts.ReplyError whose Message starts with NOPERM", r.Err, r.Err)
		}
		if cmd, ok := luascripts.RefusedScript(r.Err); !ok || cmd != "EVALSHA_RO" {
			t.Errorf("RefusedScript(%v) = %q, %v; want EVALSHA_RO, true", r.Err, cmd, ok)
		}
		if w := confCount.Run(ctx, c, []string{key}); !strings.HasPrefix(confMessage(w.Err), "NOPERM") {
			t.Errorf("a write the user may not run: %v; want NOPERM as a *luascripts.ReplyError", w.Err)
		}
		if _, err := c.ConfigGet(ctx, "maxmemory-policy"); !strings.HasPrefix(confMessage(err), "NOPERM") {
			t.Errorf("CONFIG GET the user may not run: %v; want NOPERM as a *luascripts.ReplyError", err)
		}
		if n := confCounted(t, rdb, key); n != 0 {
			t.Errorf("refused calls ran %d times", n)
		}
	})
}

// A wrong password is a configuration error the user must be told as the
// server words it (WRONGPASS), not as a broken connection to retry. The
// contract covers the calls: on a client that dials when its first call
// needs a connection (go-redis), the call's Err is WRONGPASS as a
// *luascripts.ReplyError. A client that dials in its own constructor
// (rueidis, valkey-go: NewClient) reports it there, before any adapter
// exists, and no call is made: its constructor's error must name
// WRONGPASS.
func TestConformanceAWrongPasswordIsAReplyError(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		bg := context.Background()
		user := "withpassword" + srv.Prefix()
		if err := rdb.Do(bg, "ACL", "SETUSER", user, "on", ">right", "~*", "&*", "+@all").Err(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rdb.Do(bg, "ACL", "DELUSER", user).Err() })
		t.Run("rotated", func(t *testing.T) {
			// A password changed on the server while the client runs
			// (rotated credentials): the client's next connection is
			// refused. Its calls are made with a read-only script, which
			// the client may send again, so that one written on a
			// connection killed under it is resent rather than lost.
			c := k.client(t, target{addrs: []string{srv.Addr()}, username: user, password: "right"})
			ctx := confCtx(t)
			key := srv.Prefix() + "rotated"
			if err := confRead.Run(ctx, c, []string{key}).Err; err != nil && !errors.Is(err, luascripts.ErrNil) {
				t.Fatalf("before the rotation: %v", err)
			}
			if err := rdb.Do(bg, "ACL", "SETUSER", user, "resetpass", ">rotated").Err(); err != nil {
				t.Fatal(err)
			}
			if err := rdb.Do(bg, "CLIENT", "KILL", "USER", user).Err(); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err := confRead.Run(ctx, c, []string{key}).Err
			t.Logf("a read after the password was rotated: %v, after %v", err, time.Since(start))
			if !strings.HasPrefix(confMessage(err), "WRONGPASS") {
				t.Errorf("a read whose connection the server refuses with WRONGPASS: %v (%T); want WRONGPASS as a *luascripts.ReplyError", err, err)
			}
			if err := rdb.Do(bg, "ACL", "SETUSER", user, "resetpass", ">right").Err(); err != nil {
				t.Fatal(err)
			}
		})

		c, failed := confConstruct(t, k, target{addrs: []string{srv.Addr()}, username: user, password: "wrong"})
		if c == nil {
			t.Logf("%s reports the wrong password when the client is made: %s", k.name, failed)
			if !strings.Contains(failed, "WRONGPASS") {
				t.Errorf("making a %s client with a wrong password failed with %q; want the server's WRONGPASS in it", k.name, failed)
			}
			return
		}
		ctx := confCtx(t)
		call := []luascripts.Call{{Script: confCount, Keys: []string{srv.Prefix() + "n"}}}
		c.Eval(ctx, call)
		t.Logf("Eval with a wrong password: %v", call[0].Err)
		if !strings.HasPrefix(confMessage(call[0].Err), "WRONGPASS") {
			t.Errorf("Eval with a wrong password: %v (%T); want WRONGPASS as a *luascripts.ReplyError", call[0].Err, call[0].Err)
		}
		// The contract promises a *ReplyError for Eval's error replies;
		// Info's is only logged.
		_, err := c.Info(ctx, "server")
		t.Logf("Info with a wrong password: %v (a *luascripts.ReplyError: %v)", err, confReplyError(err) != nil)
	})
}

// confConstruct makes a client of tg with k, and returns nil and the
// failure instead when making it fails the test (a kind's client function
// fails t when the client's constructor returns an error).
func confConstruct(t *testing.T, k kind, tg target) (luascripts.Client, string) {
	t.Helper()
	rec := &confRecordingTB{TB: t}
	var c luascripts.Client
	done := make(chan struct{})
	go func() {
		defer close(done)
		c = k.client(rec, tg)
	}()
	<-done
	if rec.failed != "" {
		return nil, rec.failed
	}
	return c, ""
}

// confRecordingTB is t, but for a fatal failure, which it records and
// ends the calling goroutine with (as t does), without failing t.
type confRecordingTB struct {
	testing.TB
	failed string
}

func (r *confRecordingTB) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *confRecordingTB) Fatal(args ...any) {
	r.failed = fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *confRecordingTB) FailNow() {
	r.failed = "FailNow"
	runtime.Goexit()
}

// A script's own error (redis.error_reply, a failed redis.call) is what a
// primitive matches to tell its outcomes apart: the same script must give
// the same Message on every client, as the server sent it, its code first.
// A write that failed in the script also ran once, and is not sent again.
func TestConformanceAScriptsErrorReplyReadsTheSameOnEveryClient(t *testing.T) {
	boom := luascripts.New("boom", "redis.call('INCR', KEYS[1]); return redis.error_reply('BOOM')")
	wrongType := luascripts.New("wrongtype", "redis.call('INCR', KEYS[1]); return redis.call('HGET', KEYS[1], 'f')")
	var got confPerKind[[2]string]
	confEachClientThen(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		c := k.server(t, srv)
		ctx := confCtx(t)
		var msgs [2]string
		for i, s := range []*luascripts.Script{boom, wrongType} {
			key := srv.Prefix() + s.Name()
			r := s.Run(ctx, c, []string{key})
			re := confReplyError(r.Err)
			if re == nil {
				t.Errorf("%s: %v (%T); want a *luascripts.ReplyError", s.Name(), r.Err, r.Err)
				continue
			}
			msgs[i] = re.Message
			// As the server sent it: go-redis reads the reply's line.
			server := rdb.EvalSha(context.Background(), s.SHA1(), []string{key + ":ref"}).Err()
			if server == nil || re.Message != server.Error() {
				t.Errorf("%s: Message %q; want the server's reply %q", s.Name(), re.Message, server)
			}
			if n := confCounted(t, rdb, key); n != 1 {
				t.Errorf("%s ran %d times; want once", s.Name(), n)
			}
		}
		if !strings.HasPrefix(msgs[0], "ERR ") || !strings.Contains(msgs[0], "BOOM") {
			t.Errorf("redis.error_reply('BOOM'): Message %q; want \"ERR BOOM\", the code the server adds first", msgs[0])
		}
		if !strings.HasPrefix(msgs[1], "WRONGTYPE ") {
			t.Errorf("a redis.call that failed: Message %q; want the WRONGTYPE code first", msgs[1])
		}
		got.set(k, msgs)
	}, func() {
		var want [2]string
		for name, msgs := range got.m {
			if want == ([2]string{}) {
				want = msgs
			} else if msgs != want {
				t.Errorf("%s's messages %q differ from another kind's %q", name, msgs, want)
			}
		}
		t.Logf("on %d kinds: %q", len(got.m), want)
	})
}

// The primitives need Redis 7.0 (EVALSHA_RO, the flags line of read-only
// scripts). On 6.2 a read-only script must fail with ErrRedisTooOld, which
// says so, and not with a bare "unknown command" the user must decode.
func TestConformanceARedisOlderThan7IsReportedAsTooOld(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		r62 := redistest.StartRedis62(t, srv.Addr())
		c := k.client(t, target{addrs: []string{r62.Addr()}})
		ctx := confCtx(t)
		r := confRead.Run(ctx, c, []string{srv.Prefix() + "n"})
		t.Logf("a read-only script on Redis 6.2: %v", r.Err)
		if !errors.Is(r.Err, luascripts.ErrRedisTooOld) {
			t.Errorf("a read-only script on Redis 6.2: %v, %v; want an error matching ErrRedisTooOld", r.Val, r.Err)
		}
		if msg := confMessage(r.Err); !strings.Contains(strings.ToLower(msg), "unknown command") {
			t.Errorf("the server's refusal %q is not in the error's chain as a *luascripts.ReplyError", msg)
		}
		if n, err := confCount.Run(ctx, c, []string{srv.Prefix() + "n"}).Int64(); err != nil || n != 1 {
			t.Errorf("a plain write on Redis 6.2: %d, %v; want 1", n, err)
		}
	})
}

// A service closes its client on shutdown while a background renewal or a
// waiter is still running: their calls must end with ErrClosed (the
// primitives stop on it), not hang, panic or report a network failure to
// retry.
func TestConformanceACallOnAClosedClientMatchesErrClosed(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		c := confClosedClient(t, k, target{addrs: []string{srv.Addr()}})
		ctx := confCtx(t)
		key := srv.Prefix() + "n"
		batch := []luascripts.Call{{Script: confCount, Keys: []string{key}}, {Script: confRead, Keys: []string{key}}}
		c.Eval(ctx, batch)
		call := luascripts.Call{Script: confCount, Keys: []string{key}}
		_, _ = c.EvalWait(ctx, &call, 0, 0)
		for what, err := range map[string]error{
			"Eval of a write": batch[0].Err,
			"Eval of a read":  batch[1].Err,
			"EvalWait":        call.Err,
			"Run":             confCount.Run(ctx, c, []string{key}).Err,
		} {
			if !errors.Is(err, luascripts.ErrClosed) {
				t.Errorf("%s on a closed client: %v; want an error matching ErrClosed", what, err)
			}
		}
		if n := confCounted(t, rdb, key); n != 0 {
			t.Errorf("calls on a closed client ran %d times", n)
		}
	})
}

// confMessage returns the Message of the *luascripts.ReplyError in err's
// chain, or "".
func confMessage(err error) string {
	if re := confReplyError(err); re != nil {
		return re.Message
	}
	return ""
}
