package clienttest_test

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// A server stuck in a long pause (a fork on a big dataset, a swapped-out
// VM) answers nothing and keeps its connections open. A call must end at
// its context's deadline, not at a socket timeout of seconds: a rate
// limiter's middleware promises its Timeout, a lock's renewal its TTL.
// Each call here has a 200 ms deadline on a frozen server; a write, then a
// read, on a connection already open.
//
// Slack: the call ends when a timer fires (the socket's deadline, or the
// context's) and the client's goroutines hand back the outcome; what
// delays that is scheduling, not the client's design. Measured on the two
// cores here under -race, 20 runs of this test on every kind (120 calls)
// beside a whole run of the conformance suite (load average 6): past the
// deadline by 0.9 ms in the median, 37 ms at most. 150 ms is four times
// that, and still less than a second attempt of anything would add (a
// dial, a resend: 200 ms more at least, the deadline again).
func TestConformanceACallToAFrozenServerEndsAtItsDeadline(t *testing.T) {
	const deadline, slack = 200 * time.Millisecond, 150 * time.Millisecond
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t, redistest.Own())
		rdb := srv.Client(t)
		c := k.server(t, srv)
		key := srv.Prefix() + "n"
		confLoad(t, rdb, confCount, confRead)
		if n, err := confCount.Run(confCtx(t), c, []string{key}).Int64(); err != nil || n != 1 {
			t.Fatalf("before the freeze: %d, %v", n, err) // and the connection is open
		}
		srv.Freeze(t)
		t.Cleanup(func() { srv.Thaw(t) }) // before the fixture stops it
		for _, call := range []struct {
			name string
			send func(ctx context.Context) error
		}{
			{"a write", func(ctx context.Context) error {
				call := []luascripts.Call{{Script: confCount, Keys: []string{key}}}
				c.Eval(ctx, call)
				return call[0].Err
			}},
			{"a read", func(ctx context.Context) error { return confRead.Run(ctx, c, []string{key}).Err }},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			start := time.Now()
			err := call.send(ctx)
			took := time.Since(start)
			cancel()
			t.Logf("%s on a frozen server, deadline %v: %v after %v (past the deadline by %v; slack %v)", call.name, deadline, err, took, took-deadline, slack)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s on a frozen server: %v; want an error matching context.DeadlineExceeded", call.name, err)
			}
			if took > deadline+slack {
				t.Errorf("%s on a frozen server ended after %v; want by its deadline %v plus %v", call.name, took, deadline, slack)
			}
		}
	})
}

// A call whose context has already ended (a request cancelled while it
// queued) must not be sent: its caller has gone and takes its error as
// "did not happen". It ends with ctx.Err(), on a client with an open
// connection and on one that has not dialled yet, by every path.
func TestConformanceACallWhoseContextHasEndedIsNotSent(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		confLoad(t, rdb, confCount)
		warm := k.server(t, srv)
		if _, err := warm.Time(confCtx(t)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for _, client := range []struct {
			name string
			c    luascripts.Client
		}{{"open", warm}, {"new", k.server(t, srv)}} {
			key := srv.Prefix() + client.name
			c := client.c
			for _, path := range []struct {
				name string
				err  func() error
			}{
				{"Eval", func() error {
					call := []luascripts.Call{{Script: confCount, Keys: []string{key}}, {Script: confCount, Keys: []string{key}}}
					c.Eval(ctx, call)
					return errors.Join(call[0].Err, call[1].Err)
				}},
				{"EvalWait", func() error {
					call := luascripts.Call{Script: confCount, Keys: []string{key}}
					_, _ = c.EvalWait(ctx, &call, 0, time.Second)
					return call.Err
				}},
				{"Run", func() error { return confCount.Run(ctx, c, []string{key}).Err }},
			} {
				if err := path.err(); !errors.Is(err, context.Canceled) {
					t.Errorf("%s on a client %s, with a cancelled context: %v; want context.Canceled", path.name, client.name, err)
				}
			}
			if n := confCounted(t, rdb, key); n != 0 {
				t.Errorf("calls with a cancelled context on a client %s ran %d times; want none sent", client.name, n)
			}
		}
	})
}

// A call whose context has no deadline (a background job's, a shutdown's
// release) to a server that is gone: a client that sends a call again
// until its context ends (rueidis and valkey-go do, for a command marked
// retryable) would never return. The contract lets a client that would
// resend without end resend only while ctx has a deadline: a read and an
// idempotent write, which may be resent, must each return, with an error.
// (go-redis's own retries of a refused dial take about 3 s per call.)
func TestConformanceACallWithoutADeadlineToAServerThatIsGoneReturns(t *testing.T) {
	idem := luascripts.NewIdempotent("count", confCountSrc)
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t, redistest.Own())
		t.Run("calls", func(t *testing.T) { // the client closes when it ends
			c := k.server(t, srv)
			key := srv.Prefix() + "n"
			if _, err := confCount.Run(confCtx(t), c, []string{key}).Int64(); err != nil {
				t.Fatalf("before the server went: %v", err)
			}
			srv.Kill(t) // its port now refuses connections
			for _, s := range []*luascripts.Script{confRead, idem} {
				done := make(chan error, 1)
				start := time.Now()
				go func() { done <- s.Run(context.Background(), c, []string{key}).Err }()
				select {
				case err := <-done:
					t.Logf("%s (resendable %v) without a deadline, the server gone: %v after %v", s.Name(), s.Resendable(), err, time.Since(start))
					if err == nil {
						t.Errorf("%s succeeded on a server that is gone", s.Name())
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("%s (resendable %v) without a deadline, the server gone: still running after 10s", s.Name(), s.Resendable())
				}
			}
		})
		confAwaitDialProbes(t)
	})
}

// confAwaitDialProbes waits for go-redis's dial probes to end. go-redis
// (v9.23) probes an address it failed to dial from a goroutine of its
// pool, once a second, until a dial succeeds or, its client closed, the
// probe's sleep ends: up to a second after Close, which VerifyMain's leak
// check would see if the test ran last.
func confAwaitDialProbes(t *testing.T) {
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n := runtime.Stack(buf, true); !bytes.Contains(buf[:n], []byte("(*ConnPool).tryDial")) {
			return
		}
	}
	t.Log("a go-redis dial probe still runs 3s after its client closed")
}
