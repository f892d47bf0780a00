package rueidisadapter_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/rueidisadapter"
)

func TestNewOfNilIsNilWhichPrimitivesRefuse(t *testing.T) {
	c := rueidisadapter.New(nil)
	if c != nil {
		t.Fatalf("New(nil) = %v, want nil", c)
	}
	if _, err := lock.New(c); !errors.Is(err, lock.ErrNilClient) {
		t.Fatalf("lock.New(New(nil)): %v, want ErrNilClient", err)
	}
}

// Scripts go as EVALSHA, and again as EVAL when the server does not have
// them (NOSCRIPT): after SCRIPT FLUSH a lock still acquires and releases.
func TestScriptsRunAgainAfterTheServerForgetsThem(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	rc := newRueidis(t, rueidis.ClientOption{InitAddress: addrs(s)})
	l, err := lock.New(rueidisadapter.New(rc), lock.WithPrefix(s.Prefix()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	flush := func() {
		t.Helper()
		if err := rc.Do(ctx, rc.B().ScriptFlush().Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		flush()
		lease, err := l.Acquire(ctx, "job", time.Second)
		if err != nil {
			t.Fatalf("round %d: acquire after SCRIPT FLUSH: %v", i, err)
		}
		flush()
		if ok, err := l.Release(ctx, lease); !ok || err != nil {
			t.Fatalf("round %d: release after SCRIPT FLUSH: %v, %v", i, ok, err)
		}
	}
}

// A closed rueidis client ends every call with luascripts.ErrClosed (and
// lock's acquire with it too).
func TestCallsOnAClosedClientEndWithErrClosed(t *testing.T) {
	s := redistest.Start(t)
	rc := newRueidis(t, rueidis.ClientOption{InitAddress: addrs(s)})
	c := rueidisadapter.New(rc)
	l, err := lock.New(c, lock.WithPrefix(s.Prefix()))
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
	ctx := context.Background()
	if _, err := l.Acquire(ctx, "job", time.Second); !errors.Is(err, luascripts.ErrClosed) {
		t.Errorf("acquire on a closed client: %v, want ErrClosed", err)
	}
	if _, err := c.Info(ctx, "server"); !errors.Is(err, luascripts.ErrClosed) {
		t.Errorf("INFO on a closed client: %v, want ErrClosed", err)
	}
	r := luascripts.NewIdempotent("idem", "return 1").Run(ctx, c, []string{"k"})
	if !errors.Is(r.Err, luascripts.ErrClosed) || errors.Is(r.Err, luascripts.ErrReplyLost) {
		t.Errorf("a call on a closed client: %v, want ErrClosed and not ErrReplyLost", r.Err)
	}
}

// A dropper is a connection that fails right after the write that
// carries the first command holding mark since arm: the server gets the
// command, runs it, and its reply is lost.
type dropper struct {
	net.Conn
	mark  string
	armed *atomic.Bool
}

func (d *dropper) Write(b []byte) (int, error) {
	n, err := d.Conn.Write(b)
	if err == nil && strings.Contains(string(b), d.mark) && d.armed.CompareAndSwap(true, false) {
		time.Sleep(20 * time.Millisecond) // the server reads it before the close
		_ = d.Conn.Close()
	}
	return n, err
}

// A script that writes runs at most once per call: rueidis does not send
// it again when its connection fails after the write, and the call ends
// with ErrReplyLost; an idempotent one is sent again within its deadline,
// and its call succeeds; without a deadline it is not (rueidis would
// resend until the context ends), and it fails with the connection's
// error.
func TestAWriteWhoseConnectionFailsAfterItIsSentIsNotSentAgain(t *testing.T) {
	s := redistest.Start(t)
	var armed atomic.Bool
	const mark = "dropper-mark"
	rc := newRueidis(t, rueidis.ClientOption{InitAddress: addrs(s),
		DialCtxFn: func(ctx context.Context, addr string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			return &dropper{Conn: conn, mark: mark, armed: &armed}, nil
		}})
	c := rueidisadapter.New(rc)
	key := s.Prefix() + mark // in every call's command
	src := "return redis.call('INCR', KEYS[1])"
	count := func() int64 {
		t.Helper()
		n, err := rc.Do(context.Background(), rc.B().Get().Key(key).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	bounded, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Loaded first, so that each call below is its EVALSHA, which runs.
	if r := luascripts.New("incr", src).Run(bounded, c, []string{s.Prefix() + "warm"}); r.Err != nil {
		t.Fatal(r.Err)
	}

	armed.Store(true)
	r := luascripts.New("incr", src).Run(bounded, c, []string{key})
	if !errors.Is(r.Err, luascripts.ErrReplyLost) {
		t.Errorf("a write whose connection failed after it: %v, %v; want ErrReplyLost", r.Val, r.Err)
	}
	if n := count(); n != 1 {
		t.Errorf("the write ran %d times, want 1", n)
	}

	armed.Store(true)
	r = luascripts.NewIdempotent("incr", src).Run(bounded, c, []string{key})
	if r.Err != nil {
		t.Errorf("an idempotent call with a deadline whose connection failed after it: %v, want it sent again", r.Err)
	}
	if n := count(); n != 3 {
		t.Errorf("the count is %d after the idempotent call, want 3 (sent twice)", n)
	}

	armed.Store(true)
	r = luascripts.NewIdempotent("incr", src).Run(context.Background(), c, []string{key})
	if r.Err == nil || errors.Is(r.Err, luascripts.ErrReplyLost) {
		t.Errorf("an idempotent call without a deadline whose connection failed after it: %v, %v; want the connection's error", r.Val, r.Err)
	}
	if n := count(); n != 4 {
		t.Errorf("the count is %d after the idempotent call without a deadline, want 4 (sent once)", n)
	}
}

// A call past its context's deadline on a frozen server ends with the
// context's error, not ErrReplyLost: it timed out.
func TestACallPastItsDeadlineEndsWithTheContextsError(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c := rueidisadapter.New(newRueidis(t, rueidis.ClientOption{InitAddress: addrs(s)}))
	script := luascripts.New("one", "return 1")
	if r := script.Run(context.Background(), c, []string{"k"}); r.Err != nil {
		t.Fatal(r.Err)
	}
	s.Freeze(t)
	defer s.Thaw(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := script.Run(ctx, c, []string{"k"})
	if !errors.Is(r.Err, context.DeadlineExceeded) || errors.Is(r.Err, luascripts.ErrReplyLost) {
		t.Errorf("a call past its deadline: %v, want DeadlineExceeded only", r.Err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the call returned %v after its start, past its 200ms deadline", d)
	}
}

// WAIT goes on the connection of its script: with one replica, it counts
// the replica's acknowledgment of the script's write.
func TestEvalWaitCountsTheReplicasOfItsScriptsWrite(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	s.StartReplica(t)
	c := rueidisadapter.New(newRueidis(t, rueidis.ClientOption{InitAddress: addrs(s)}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	script := luascripts.New("set", "return redis.call('SET', KEYS[1], ARGV[1])")
	r, acked, err := script.RunWait(ctx, c, []string{s.Prefix() + "k"}, []any{"v"}, 1, 2*time.Second)
	if r.Err != nil || err != nil || acked != 1 {
		t.Fatalf("RunWait: %v, %v; acked %d, want 1", r.Err, err, acked)
	}
	if v, _ := r.Text(); v != "OK" {
		t.Fatalf("the script replied %q, want OK", v)
	}
}

// A subscription's confirmation is its first wake-up, and a message the
// next; stop returns once nothing more is sent.
func TestSubscribeWakesOnConfirmationAndOnEachMessage(t *testing.T) {
	s := redistest.Start(t)
	rc := newRueidis(t, rueidis.ClientOption{InitAddress: addrs(s)})
	c := rueidisadapter.New(rc)
	ctx := context.Background()
	ch := s.Prefix() + "chan"
	wake, stop := c.Subscribe(ctx, ch)
	defer stop()
	within := func(what string) {
		t.Helper()
		select {
		case <-wake:
		case <-time.After(5 * time.Second):
			t.Fatalf("no wake-up on %s within 5s", what)
		}
	}
	within("the subscription's confirmation")
	if err := rc.Do(ctx, rc.B().Publish().Channel(ch).Message("x").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	within("a message")
	stop()
	if err := rc.Do(ctx, rc.B().Publish().Channel(ch).Message("x").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wake:
		t.Fatal("a wake-up after stop returned")
	case <-time.After(100 * time.Millisecond):
	}
}
