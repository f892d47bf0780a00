package clienttest_test

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// A path that fails holds an acquire on its connection while a new
// connection gets through (TCP goes on retransmitting what an old
// connection carried, and may deliver it after what a new one sent): the
// caller gives up, the give-back's releases go on the new connection and
// find nothing, and then the acquire lands and takes the lock for nobody.
// The give-back stopped after two answers, so the lock stayed taken for
// its whole TTL; it looks again, a twentieth of the TTL later and then at
// doubling intervals up to a fifth of it, until the TTL has passed since
// the acquire was sent.
func TestLockAnAcquireDeliveredAfterItsGiveBackIsFreedLongBeforeItsTTL(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		s := redistest.Start(t)
		acquiredLate(t, k, s, func(client luascripts.Client) acquireFunc {
			l := newLockLocker(t, client, s)
			return func(ctx context.Context, name string, ttl time.Duration) error {
				_, err := l.Acquire(ctx, name, ttl)
				return err
			}
		}, lockKey(s, "job"), lockCounterKey(s, "job"))
	})
}

// The same for a semaphore's permit.
func TestSemaphoreAnAcquireDeliveredAfterItsGiveBackIsFreedLongBeforeItsTTL(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		s := redistest.Start(t)
		acquiredLate(t, k, s, func(client luascripts.Client) acquireFunc {
			i := newSemIssuer(t, client, s)
			return func(ctx context.Context, name string, ttl time.Duration) error {
				_, err := i.Acquire(ctx, name, 1, ttl)
				return err
			}
		}, semPermitsKey(s, "job"), s.Prefix()+"semaphore:{job}:token")
	})
}

// An acquire whose every dial was refused was never written to any
// connection: nothing can have been granted, and there is nothing to give
// back. Each such acquire started a give-back that retried its release
// until the TTL had passed, so a Redis that was down left a goroutine
// behind for every attempt, each dialling on until then (and a test that
// ended within that time failed its goroutine check). A refused dial is
// no lost reply now.
func TestAnAcquireRefusedAtTheDialLeavesNoGiveBackBehind(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		s := redistest.Start(t, redistest.Own())
		client := k.server(t, s)
		locker, issuer := newLockLocker(t, client, s), newSemIssuer(t, client, s)
		s.Kill(t)
		var wg sync.WaitGroup
		for name, acquire := range map[string]func(ctx context.Context) error{
			"lock":      func(ctx context.Context) error { _, err := locker.Acquire(ctx, "job", time.Minute); return err },
			"semaphore": func(ctx context.Context) error { _, err := issuer.Acquire(ctx, "job", 2, time.Minute); return err },
		} {
			wg.Go(func() {
				// Longer than go-redis takes to give up dialling (about
				// 3.4 s with its defaults); rueidis and valkey-go dial
				// again until the context ends, and return the refused
				// dial's error.
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				start := time.Now()
				id, err := inGoroutine(func() error { return acquire(ctx) })
				t.Logf("%s: Acquire with nothing listening: %v, after %v", name, err, time.Since(start))
				if !errors.Is(err, syscall.ECONNREFUSED) {
					t.Errorf("%s: Acquire: %v; want the refused dial's error", name, err)
				} else if n := giveBacksStartedBy(id); n > 0 {
					t.Errorf("%s: an acquire refused at the dial started %d give-backs", name, n)
				}
			})
		}
		wg.Wait()
	})
}

// inGoroutine runs f in a goroutine of its own and returns the
// goroutine's id and f's result.
func inGoroutine(f func() error) (string, error) {
	type result struct {
		err error
		id  string
	}
	done := make(chan result)
	go func() {
		buf := make([]byte, 64)
		buf = buf[:runtime.Stack(buf, false)] // "goroutine 123 [running]:..."
		id := string(bytes.Fields(buf)[1])
		done <- result{f(), id}
	}()
	r := <-done
	return r.id, r.err
}

// giveBacksStartedBy counts the running give-backs that goroutine id
// started.
func giveBacksStartedBy(id string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("leasecore.GiveBack")) && bytes.Contains(g, []byte("in goroutine "+id+"\n")) {
			n++
		}
	}
	return n
}

// An acquireFunc takes name for ttl.
type acquireFunc func(ctx context.Context, name string, ttl time.Duration) error

// acquiredLate runs the sequence on a client of k's through a relay to s:
// an acquire of "job" on a stalled connection that times out, its
// give-back's first releases through on a new connection, then the relay
// resumed so that the held acquire lands (its grant writes counter); and
// it waits for held, the key a grant writes, to be gone: within a quarter
// of the TTL, where the bug kept it the whole TTL.
func acquiredLate(t *testing.T, k kind, s *redistest.Server, on func(luascripts.Client) acquireFunc, held, counter string) {
	t.Helper()
	const ttl = 10 * time.Second
	relay := redistest.StartRelay(t, s.Addr())
	acquire := on(k.client(t, target{addrs: []string{relay.Addr()}}))
	ctx := context.Background()
	if err := acquire(ctx, "warm", ttl); err != nil { // loads the script
		t.Fatal(err)
	}
	relay.StallOpen()
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err := acquire(short, "job", ttl)
	cancel()
	if err == nil {
		t.Fatal("acquired through a stalled connection")
	}
	raw := s.Client(t)
	time.Sleep(time.Second) // the give-back's releases answered on a new connection
	if n := raw.Exists(ctx, counter).Val(); n != 0 {
		t.Fatalf("the held acquire ran before the relay resumed (%s exists)", counter)
	}
	relay.Resume()
	start := time.Now()
	lockWaitFor(t, 5*time.Second, "the held acquire lands", func() bool { return raw.Exists(ctx, counter).Val() == 1 })
	landed := time.Since(start)
	lockWaitFor(t, ttl/4, "the late grant given back", func() bool { return raw.Exists(ctx, held).Val() == 0 })
	t.Logf("the held acquire landed %v after the resume; its grant was given back %v after that (TTL %v)", landed, time.Since(start)-landed, ttl)
}
