package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// client returns a client of s that honours context deadlines: without
// ContextTimeoutEnabled, go-redis bounds a read by ReadTimeout alone.
func client(t testing.TB, s *redistest.Server, tune ...func(*redis.Options)) *redis.Client {
	t.Helper()
	return s.Client(t, append([]func(*redis.Options){func(o *redis.Options) { o.ContextTimeoutEnabled = true }}, tune...)...)
}

// newLocker returns a Locker on a client of s, its keys under s's prefix.
func newLocker(t testing.TB, s *redistest.Server, opts ...lock.Option) *lock.Locker {
	t.Helper()
	return newLockerOn(t, s, client(t, s), opts...)
}

// newLockerOn returns a Locker on rdb, through goredisadapter, its keys
// under s's prefix.
func newLockerOn(t testing.TB, s *redistest.Server, rdb redis.UniversalClient, opts ...lock.Option) *lock.Locker {
	t.Helper()
	l, err := lock.New(goredisadapter.New(rdb), append([]lock.Option{lock.WithPrefix(s.Prefix() + "lock:")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// lockKey and counterKey follow the key layout documented on Locker.
func lockKey(s *redistest.Server, name string) string { return s.Prefix() + "lock:{" + name + "}" }
func counterKey(s *redistest.Server, name string) string {
	return lockKey(s, name) + ":token"
}

// waitFor polls cond until it holds or within passes; it fails t then.
func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitGone waits until the lock called name has expired on the server.
func waitGone(t testing.TB, l *lock.Locker, name string, within time.Duration) {
	t.Helper()
	waitFor(t, within, "lock "+name+" expired", func() bool {
		h, err := l.Holder(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		return !h.Held
	})
}

func mustAcquire(t testing.TB, l *lock.Locker, name string, ttl time.Duration) *lock.Lease {
	t.Helper()
	lease, err := l.Acquire(context.Background(), name, ttl)
	if err != nil {
		t.Fatalf("acquire %q: %v", name, err)
	}
	return lease
}
