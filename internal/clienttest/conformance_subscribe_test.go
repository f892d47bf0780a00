package clienttest_test

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
)

// A waiter (lock's and semaphore's AcquireWait) subscribes, then tries
// once, then waits for a wake-up: a release published between its try and
// a subscription not yet in effect is lost, and the waiter sleeps until
// its deadline. So the first wake-up must come only once the server has
// the subscription, and every message must wake it. stop must end the
// subscription promptly and leave no goroutine behind (VerifyMain checks).
func TestConformanceSubscribeWakesOnceInEffectAndOncePerMessage(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		channel := srv.Prefix() + "wake"
		// The client's SUBSCRIBE is held back until released: until then
		// the subscription is certainly not in effect.
		hold := confHoldFor(channel)
		c := k.client(t, target{addrs: []string{srv.Addr()}, dial: hold.dial})
		type subscription struct {
			wakes <-chan struct{}
			stop  func()
		}
		subscribed := make(chan subscription, 1)
		ctx := confCtx(t)
		go func() {
			wakes, stop := c.Subscribe(ctx, channel)
			subscribed <- subscription{wakes, stop}
		}()
		select {
		case <-hold.seen:
		case <-time.After(5 * time.Second):
			t.Fatal("no SUBSCRIBE written within 5s of Subscribe")
		}
		if n := confPublish(t, rdb, channel); n != 0 {
			t.Fatalf("PUBLISH reached %d subscribers while the SUBSCRIBE was held back", n)
		}
		// A Subscribe that returns before the subscription is in effect
		// (go-redis's) must not wake its caller yet; one that returns only
		// once it is (rueidis's) cannot have.
		var sub subscription
		select {
		case sub = <-subscribed:
			if confWake(sub.wakes, 200*time.Millisecond) {
				t.Error("a wake-up before the subscription was in effect")
			}
		case <-time.After(200 * time.Millisecond):
		}
		hold.release()
		if sub.wakes == nil {
			select {
			case sub = <-subscribed:
			case <-time.After(5 * time.Second):
				t.Fatal("Subscribe did not return within 5s of the SUBSCRIBE reaching the server")
			}
		}
		wakes, stop := sub.wakes, sub.stop
		stopped := false
		defer func() {
			if !stopped {
				stop()
			}
		}()
		if !confWake(wakes, 5*time.Second) {
			t.Fatal("no first wake-up within 5s of the SUBSCRIBE reaching the server")
		}
		// In effect: the server counts the subscriber at once.
		for i := range 3 {
			if n := confPublish(t, rdb, channel); n != 1 {
				t.Fatalf("PUBLISH %d after the first wake-up reached %d subscribers; want 1: the wake-up came before the subscription was in effect", i, n)
			}
			if !confWake(wakes, 5*time.Second) {
				t.Fatalf("no wake-up within 5s of PUBLISH %d", i)
			}
		}
		if confWake(wakes, 100*time.Millisecond) {
			t.Error("a wake-up with no message published")
		}

		start := time.Now()
		stop()
		stopped = true
		took := time.Since(start)
		t.Logf("stop took %v", took)
		if took > time.Second {
			t.Errorf("stop took %v; want it prompt", took)
		}
		confPublish(t, rdb, channel)
		if confWake(wakes, 100*time.Millisecond) {
			t.Error("a wake-up after stop returned")
		}
	})
}

// A subscription that fails (the user may not subscribe to the channel, or
// the client is closed) sends nothing on wake: a waiter woken by it would
// take it for a subscription in effect and miss the release it waits for.
// stop still returns.
func TestConformanceASubscriptionThatFailsSendsNoWakeUp(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		bg := context.Background()
		user := "nochannels" + srv.Prefix()
		if err := rdb.Do(bg, "ACL", "SETUSER", user, "on", ">pw", "~*", "+@all", "resetchannels").Err(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rdb.Do(bg, "ACL", "DELUSER", user).Err() })
		channel := srv.Prefix() + "wake"

		t.Run("refused", func(t *testing.T) {
			c := k.client(t, target{addrs: []string{srv.Addr()}, username: user, password: "pw"})
			wakes, stop := c.Subscribe(confCtx(t), channel)
			got := confWake(wakes, 300*time.Millisecond)
			confStopPromptly(t, stop)
			if got {
				t.Error("a subscription the server refused (NOPERM) sent a wake-up")
			}
		})
		t.Run("closed client", func(t *testing.T) {
			c := confClosedClient(t, k, target{addrs: []string{srv.Addr()}})
			wakes, stop := c.Subscribe(confCtx(t), channel)
			got := confWake(wakes, 300*time.Millisecond)
			confStopPromptly(t, stop)
			if got {
				t.Error("a subscription on a closed client sent a wake-up")
			}
		})
	})
}

// On a Cluster a message published on any node reaches every node's
// subscribers: a waiter subscribed through one node must be woken by a
// release published through another.
func TestConformanceSubscribeOnAClusterWakesOnAMessagePublishedOnAnyNode(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t)
		c := k.cluster(t, cl)
		channel := "{wake}channel"
		wakes, stop := c.Subscribe(confCtx(t), channel)
		defer confStopPromptly(t, stop)
		if !confWake(wakes, 5*time.Second) {
			t.Fatal("no first wake-up within 5s of Subscribe")
		}
		// Each node in turn, so that some are not the one subscribed to.
		for _, n := range cl.Nodes() {
			confPublish(t, n.Client(t), channel)
			if !confWake(wakes, 5*time.Second) {
				t.Fatalf("no wake-up within 5s of a PUBLISH on %s", n.Addr())
			}
		}
	})
}

// confHold is a target's dial whose connections pass everything through,
// but for the bytes a client writes from a write carrying its marker on:
// those it holds, in order, until release (the client's write succeeds).
type confHold struct {
	marker []byte
	seen   chan struct{} // closed once a write carried the marker

	mu       sync.Mutex
	held     []byte
	conn     net.Conn // the connection holding them
	released bool
}

func confHoldFor(marker string) *confHold {
	return &confHold{marker: []byte(marker), seen: make(chan struct{})}
}

func (h *confHold) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &confHoldConn{Conn: c, h: h}, nil
}

// release sends what was held, and lets everything through from then on.
func (h *confHold) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.released = true
	if h.conn != nil && len(h.held) > 0 {
		_, _ = h.conn.Write(h.held)
	}
	h.held = nil
}

type confHoldConn struct {
	net.Conn
	h *confHold
}

func (c *confHoldConn) Write(p []byte) (int, error) {
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.released || h.conn != nil && h.conn != c.Conn:
	case h.conn == c.Conn:
		h.held = append(h.held, p...)
		return len(p), nil
	case bytes.Contains(p, h.marker):
		h.conn, h.held = c.Conn, append([]byte(nil), p...)
		close(h.seen)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// confPublish publishes on channel with go-redis and returns how many
// subscribers of that server received it.
func confPublish(t testing.TB, rdb redis.Cmdable, channel string) int64 {
	t.Helper()
	n, err := rdb.Publish(context.Background(), channel, "m").Result()
	if err != nil {
		t.Fatalf("PUBLISH: %v", err)
	}
	return n
}

// confStopPromptly calls stop and fails t if it takes more than a second.
func confStopPromptly(t testing.TB, stop func()) {
	t.Helper()
	start := time.Now()
	stop()
	if took := time.Since(start); took > time.Second {
		t.Errorf("stop took %v; want it prompt", took)
	}
}
