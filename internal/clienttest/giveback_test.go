package clienttest_test

import (
	"context"
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
