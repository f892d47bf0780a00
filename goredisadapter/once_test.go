package goredisadapter_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// dropAfter returns go-redis options for s whose first connection to
// carry marker drops right after the server has answered it: the reply is
// read off the socket (so the call has certainly run) and the client gets
// io.EOF instead. go-redis then sends the pipeline again, as it sends any
// command after a failed connection (MaxRetries, 3 by default).
func dropAfter(s *redistest.Server, marker string, dropped *atomic.Int32) *redis.Options {
	o := s.Options()
	var once sync.Once
	o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &dropConn{Conn: c, r: bufio.NewReader(c), marker: []byte(marker), once: &once, dropped: dropped}, nil
	}
	return o
}

// A dropConn drops after the reply of the first write that carries marker.
type dropConn struct {
	net.Conn
	r       *bufio.Reader
	marker  []byte
	once    *sync.Once
	armed   bool
	dropped *atomic.Int32
}

func (c *dropConn) Write(p []byte) (int, error) {
	if bytes.Contains(p, c.marker) {
		c.once.Do(func() { c.armed = true })
	}
	return c.Conn.Write(p)
}

func (c *dropConn) Read(p []byte) (int, error) {
	if c.armed {
		// The scripts here answer one line (":1\r\n"): read it whole, so
		// the server has run the call, then lose it with the connection.
		if _, err := c.r.ReadString('\n'); err != nil {
			return 0, err
		}
		c.dropped.Add(1)
		_ = c.Conn.Close()
		return 0, io.EOF
	}
	return c.r.Read(p)
}

// go-redis sends a pipeline again after its connection fails: a write must
// not run a second time. With go-redis's default retries the call ends
// with ErrReplyLost and the server ran it once.
func TestAWriteWhoseConnectionDropsAfterItRanIsNotSentAgain(t *testing.T) {
	s := redistest.Start(t)
	incr := luascripts.New("incr", "return redis.call('INCR', KEYS[1])")
	var dropped atomic.Int32
	rdb := redis.NewClient(dropAfter(s, incr.SHA1(), &dropped))
	defer rdb.Close()
	check := s.Client(t)
	ctx := context.Background()
	if err := check.ScriptLoad(ctx, incr.Source()).Err(); err != nil {
		t.Fatal(err)
	}
	key := s.Prefix() + "n"
	err := incr.Run(ctx, goredisadapter.New(rdb), []string{key}).Err
	if dropped.Load() != 1 {
		t.Fatalf("the connection dropped %d times, want once", dropped.Load())
	}
	if !errors.Is(err, luascripts.ErrReplyLost) {
		t.Fatalf("a write whose reply was lost: %v, want ErrReplyLost", err)
	}
	if n, _ := check.Get(ctx, key).Int(); n != 1 {
		t.Fatalf("the server ran the write %d times, want once", n)
	}
	t.Logf("the call ended with: %v", err)
}

// A resendable script is sent again, as go-redis sends any command again:
// the same drop costs nothing but a second run, which such a script is
// written to survive (here it is a plain INCR, so the second run shows).
func TestAResendableScriptIsSentAgainAfterItsConnectionDrops(t *testing.T) {
	s := redistest.Start(t)
	incr := luascripts.NewIdempotent("incr-again", "return redis.call('INCR', KEYS[1])")
	var dropped atomic.Int32
	rdb := redis.NewClient(dropAfter(s, incr.SHA1(), &dropped))
	defer rdb.Close()
	check := s.Client(t)
	ctx := context.Background()
	if err := check.ScriptLoad(ctx, incr.Source()).Err(); err != nil {
		t.Fatal(err)
	}
	key := s.Prefix() + "n"
	n, err := incr.Run(ctx, goredisadapter.New(rdb), []string{key}).Int()
	if err != nil || n != 2 || dropped.Load() != 1 {
		t.Fatalf("a resendable call whose reply was lost: %d, %v (dropped %d); want 2, sent again", n, err, dropped.Load())
	}
}

// A batch whose connection drops: each write in it ran at most once, and
// every call whose reply was lost says so.
func TestABatchWhoseConnectionDropsRunsEachWriteAtMostOnce(t *testing.T) {
	s := redistest.Start(t)
	incr := luascripts.New("incr-batch", "return redis.call('INCR', KEYS[1])")
	var dropped atomic.Int32
	rdb := redis.NewClient(dropAfter(s, incr.SHA1(), &dropped))
	defer rdb.Close()
	check := s.Client(t)
	ctx := context.Background()
	if err := check.ScriptLoad(ctx, incr.Source()).Err(); err != nil {
		t.Fatal(err)
	}
	calls := make([]luascripts.Call, 5)
	for i := range calls {
		calls[i] = luascripts.Call{Script: incr, Keys: []string{s.Prefix() + "b"}}
	}
	luascripts.Send(ctx, goredisadapter.New(rdb), calls)
	lost := 0
	for i := range calls {
		switch {
		case errors.Is(calls[i].Err, luascripts.ErrReplyLost):
			lost++
		case calls[i].Err != nil:
			t.Fatalf("call %d: %v", i, calls[i].Err)
		}
	}
	n, _ := check.Get(ctx, s.Prefix()+"b").Int()
	t.Logf("%d of 5 calls lost their reply; the server counted %d", lost, n)
	if lost == 0 || n > 5 || n < 5-lost {
		t.Fatalf("%d lost, %d counted: want some lost and every call run at most once", lost, n)
	}
}

// A Ring places keys by a hash go-redis does not expose: its calls still
// run, and Primary says it cannot tell.
func TestARingRunsCallsAndCannotTellPrimaries(t *testing.T) {
	s := redistest.Start(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": s.Addr()}})
	defer ring.Close()
	c := goredisadapter.New(ring)
	incr := luascripts.New("incr-ring", "return redis.call('INCR', KEYS[1])")
	if n, err := incr.Run(context.Background(), c, []string{s.Prefix() + "r"}).Int(); err != nil || n != 1 {
		t.Fatalf("a call on a Ring: %d, %v", n, err)
	}
	if _, err := c.Primary(context.Background(), "k"); !errors.Is(err, luascripts.ErrNoRoute) {
		t.Fatalf("Primary on a Ring: %v, want ErrNoRoute", err)
	}
	// WAIT would go where its first argument hashes, not to the write's
	// connection: refused, and the script not sent.
	_, _, err := incr.RunWait(context.Background(), c, []string{s.Prefix() + "w"}, nil, 1, time.Second)
	if !errors.Is(err, goredisadapter.ErrRingWait) {
		t.Fatalf("RunWait on a Ring: %v, want ErrRingWait", err)
	}
	if n, _ := s.Client(t).Exists(context.Background(), s.Prefix()+"w").Result(); n != 0 {
		t.Fatal("the script of a refused RunWait ran")
	}
}

func TestNewOfNilIsNilForThePrimitivesToRefuse(t *testing.T) {
	var rdb *redis.Client
	if c := goredisadapter.New(rdb); c != nil || !luascripts.IsNil(luascripts.Client(c)) {
		t.Fatalf("New(nil) = %v, want nil", c)
	}
}

// A primitive's constructor refuses New(nil), but a client passed
// elsewhere (a replica to lock's CheckReplicaClocks) is called as it is:
// every call on it fails, as on a zero Client, instead of panicking.
func TestCallsOnNewOfNilReturnAnErrorInsteadOfPanicking(t *testing.T) {
	ctx := context.Background()
	c := goredisadapter.New(nil)
	script := luascripts.New("nil-client", "return 1")
	for name, call := range map[string]func() error{
		"Time":      func() error { _, err := c.Time(ctx); return err },
		"Info":      func() error { _, err := c.Info(ctx, "server"); return err },
		"ConfigGet": func() error { _, err := c.ConfigGet(ctx, "maxmemory-policy"); return err },
		"Primary":   func() error { _, err := c.Primary(ctx, "k"); return err },
		"Eval":      func() error { return script.Run(ctx, c, nil).Err },
		"EvalWait":  func() error { _, _, err := script.RunWait(ctx, c, nil, nil, 1, time.Second); return err },
		"Subscribe": func() error { // no error to return: no wake-ups, as on a zero Client
			wake, unsubscribe := c.Subscribe(ctx, "channel")
			unsubscribe()
			if wake != nil {
				return nil
			}
			return errors.New("no wake-ups")
		},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panicked: %v", name, r)
				}
			}()
			if err := call(); err == nil {
				t.Errorf("%s: no error", name)
			}
		}()
	}
}
