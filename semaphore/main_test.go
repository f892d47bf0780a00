package semaphore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// newIssuer returns an Issuer on a go-redis client of s (go-redis's
// defaults, and context deadlines honoured), its keys under s's prefix.
func newIssuer(t testing.TB, s *redistest.Server, opts ...semaphore.Option) *semaphore.Issuer {
	t.Helper()
	return newIssuerOn(t, s, goredisadapter.New(s.Client(t)), opts...)
}

func newIssuerOn(t testing.TB, s *redistest.Server, c semaphore.Client, opts ...semaphore.Option) *semaphore.Issuer {
	t.Helper()
	i, err := semaphore.New(c, append([]semaphore.Option{semaphore.WithPrefix(s.Prefix() + "semaphore:")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// permitsKey follows the key layout of the package doc.
func permitsKey(s *redistest.Server, name string) string {
	return s.Prefix() + "semaphore:{" + name + "}"
}

func mustAcquire(t testing.TB, i *semaphore.Issuer, name string, capacity int, ttl time.Duration) *semaphore.Permit {
	t.Helper()
	p, err := i.Acquire(context.Background(), name, capacity, ttl)
	if err != nil {
		t.Fatalf("acquire %q: %v", name, err)
	}
	return p
}

func mustRelease(t testing.TB, i *semaphore.Issuer, p *semaphore.Permit) {
	t.Helper()
	if ok, err := i.Release(context.Background(), p); err != nil || !ok {
		t.Fatalf("release %q token %d: %v, %v", p.Name, p.Token, ok, err)
	}
}

// waitFor polls cond until it holds, failing t after within.
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

func holders(t testing.TB, i *semaphore.Issuer, name string) []semaphore.Holder {
	t.Helper()
	h, err := i.Holders(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
