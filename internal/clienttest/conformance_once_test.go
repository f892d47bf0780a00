package clienttest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// A client that sends a command again after its connection failed (as
// go-redis does, MaxRetries) runs a script that had already run a second
// time: a rate limit charged twice, a fencing token skipped. A write whose
// connection drops right after the server ran it must end with
// ErrReplyLost and have run once, however it was sent.
func TestConformanceAWriteWhoseConnectionDropsAfterItRanIsNotSentAgain(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		// Loaded first, so that the first EVALSHA runs the script: the
		// command the connection drops after is a run, not a NOSCRIPT.
		confLoad(t, rdb, confCount)
		for _, path := range []struct {
			name string
			send func(ctx context.Context, c luascripts.Client, key string) luascripts.Reply
		}{
			{"Eval", func(ctx context.Context, c luascripts.Client, key string) luascripts.Reply {
				call := []luascripts.Call{{Script: confCount, Keys: []string{key}}}
				c.Eval(ctx, call)
				return call[0].Result()
			}},
			{"EvalWait", func(ctx context.Context, c luascripts.Client, key string) luascripts.Reply {
				call := luascripts.Call{Script: confCount, Keys: []string{key}}
				_, _ = c.EvalWait(ctx, &call, 0, 100*time.Millisecond) // WAIT's own outcome: the connection dropped
				return call.Result()
			}},
			{"Send", func(ctx context.Context, c luascripts.Client, key string) luascripts.Reply {
				call := []luascripts.Call{{Script: confCount, Keys: []string{key}}}
				luascripts.Send(ctx, c, call)
				return call[0].Result()
			}},
			{"Run", func(ctx context.Context, c luascripts.Client, key string) luascripts.Reply {
				return confCount.Run(ctx, c, []string{key})
			}},
		} {
			t.Run(path.name, func(t *testing.T) {
				key := srv.Prefix() + "once:" + path.name
				d := newConfDropper(key)
				c := k.client(t, target{addrs: []string{srv.Addr()}, dial: d.dial})
				r := path.send(confCtx(t), c, key)
				d.didDrop(t)
				if !errors.Is(r.Err, luascripts.ErrReplyLost) {
					t.Errorf("a write whose connection dropped after it ran: %v, %v; want an error matching ErrReplyLost", r.Val, r.Err)
				}
				if n := confCounted(t, rdb, key); n != 1 {
					t.Errorf("the server ran the write %d times; want 1", n)
				}
			})
		}
	})
}

// The cost of sending a write at most once must not fall on the scripts
// that may run twice: an idempotent write (lock's acquire) whose
// connection drops is sent again, as the client sends any command, and
// succeeds, where ending it with ErrReplyLost would fail an acquire that
// the retry would have made.
//
// Its context has a deadline: a client that would send a call again
// without end (rueidis and valkey-go retry a retryable command until its
// context ends) may resend it only then (see luascripts.Client.Eval).
func TestConformanceAnIdempotentWriteWhoseConnectionDropsIsSentAgainAndSucceeds(t *testing.T) {
	// Runs are counted in KEYS[1]; the first run stores ARGV[1], the
	// call's id, in KEYS[2] and counts its effect in KEYS[3]; a later run
	// finds the id and only answers it.
	idem := luascripts.NewIdempotent("idem", `redis.call('INCR', KEYS[1])
if redis.call('SET', KEYS[2], ARGV[1], 'NX') then redis.call('INCR', KEYS[3]) end
return redis.call('GET', KEYS[2])`)
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		confLoad(t, rdb, idem)
		for _, path := range []string{"Eval", "Run"} {
			t.Run(path, func(t *testing.T) {
				p := srv.Prefix() + "{idem:" + path + "}:"
				keys := []string{p + "runs", p + "id", p + "effects"}
				d := newConfDropper(keys[0])
				c := k.client(t, target{addrs: []string{srv.Addr()}, dial: d.dial})
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second) // a deadline: see the test's doc
				defer cancel()
				var r luascripts.Reply
				if path == "Eval" {
					call := []luascripts.Call{{Script: idem, Keys: keys, Args: []any{"call-1"}}}
					c.Eval(ctx, call)
					r = call[0].Result()
				} else {
					r = idem.Run(ctx, c, keys, "call-1")
				}
				d.didDrop(t)
				if v, err := r.Text(); err != nil || v != "call-1" {
					t.Errorf("an idempotent write whose connection dropped: %q, %v; want \"call-1\", sent again", v, err)
				}
				if n := confCounted(t, rdb, keys[0]); n != 2 {
					t.Errorf("the server ran it %d times; want 2: once before the drop, once sent again", n)
				}
				if n := confCounted(t, rdb, keys[2]); n != 1 {
					t.Errorf("its effect was made %d times; want 1", n)
				}
			})
		}
	})
}

// A read whose connection drops is sent again, as a client sends any read:
// Preflight and a rate limit's peek must not fail where go-redis's own
// GET would have succeeded. (A deadline on its context, for the clients
// that resend only with one: see the idempotent write's test.)
func TestConformanceAReadOnlyScriptWhoseConnectionDropsIsSentAgainAndSucceeds(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		confLoad(t, rdb, confRead)
		key := srv.Prefix() + "read"
		if err := rdb.Set(context.Background(), key, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.ConfigResetStat(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		d := newConfDropper(key)
		c := k.client(t, target{addrs: []string{srv.Addr()}, dial: d.dial})
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second) // a deadline: see the test's doc
		defer cancel()
		r := confRead.Run(ctx, c, []string{key})
		d.didDrop(t)
		if v, err := r.Text(); err != nil || v != "v" {
			t.Errorf("a read whose connection dropped: %q, %v; want \"v\", sent again", v, err)
		}
		if n := confCalls(t, rdb, "evalsha_ro"); n != 2 {
			t.Errorf("the server ran EVALSHA_RO %d times; want 2: once before the drop, once sent again", n)
		}
	})
}

// A batch is one round trip: when its connection drops, every call in it
// may have run. No write of it may be sent again (a client that resends a
// whole pipeline after a failure runs every write in it twice); each call
// either has its reply or ends with ErrReplyLost, and the call whose reply
// was dropped after it ran certainly ends with ErrReplyLost.
func TestConformanceABatchWhoseConnectionDropsRunsEachWriteAtMostOnce(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		confLoad(t, rdb, confCount)
		for _, path := range []string{"Eval", "Send"} {
			t.Run(path, func(t *testing.T) {
				var keys []string
				for _, n := range []string{"a", "b", "c", "d", "e"} {
					keys = append(keys, srv.Prefix()+"batch:"+path+":"+n)
				}
				const marked = 2 // the call the connection drops after
				d := newConfDropper(keys[marked])
				c := k.client(t, target{addrs: []string{srv.Addr()}, dial: d.dial})
				batch := make([]luascripts.Call, len(keys))
				for i, key := range keys {
					batch[i] = luascripts.Call{Script: confCount, Keys: []string{key}}
				}
				if path == "Eval" {
					c.Eval(confCtx(t), batch)
				} else {
					luascripts.Send(confCtx(t), c, batch)
				}
				d.didDrop(t)
				var ran []int64
				var errs []string
				for i, call := range batch {
					n := confCounted(t, rdb, keys[i])
					ran = append(ran, n)
					switch {
					case call.Err == nil:
						errs = append(errs, "ok")
					case errors.Is(call.Err, luascripts.ErrReplyLost):
						errs = append(errs, "lost")
					default:
						errs = append(errs, call.Err.Error())
					}
					switch {
					case n > 1:
						t.Errorf("call %d ran %d times; want at most once", i, n)
					case call.Err == nil && (n != 1 || call.Reply != int64(1)):
						t.Errorf("call %d succeeded with %v but the server ran it %d times", i, call.Reply, n)
					case call.Err != nil && !errors.Is(call.Err, luascripts.ErrReplyLost):
						t.Errorf("call %d: %v; want its reply or an error matching ErrReplyLost", i, call.Err)
					}
					if i == marked && (n != 1 || !errors.Is(call.Err, luascripts.ErrReplyLost)) {
						t.Errorf("the call whose reply was dropped after it ran: %v, %v, ran %d times; want ErrReplyLost, ran once", call.Reply, call.Err, n)
					}
				}
				t.Logf("the batch's calls ran %v times, ended %q (the connection dropped after call %d)", ran, errs, marked)
			})
		}
	})
}
