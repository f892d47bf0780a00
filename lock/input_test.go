package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/lock"
)

func TestNewRejectsNilClientAndBadOptions(t *testing.T) {
	if _, err := lock.New(nil); !errors.Is(err, lock.ErrNilClient) {
		t.Fatalf("nil client: %v", err)
	}
	var typedNil *redis.Client
	if _, err := lock.New(typedNil); !errors.Is(err, lock.ErrNilClient) {
		t.Fatalf("typed nil client: %v", err)
	}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for name, opt := range map[string]lock.Option{
		"empty prefix":         lock.WithPrefix(""),
		"prefix with a brace":  lock.WithPrefix("a{b"),
		"empty owner":          lock.WithOwner(""),
		"zero replicas":        lock.WithReplicas(0, time.Second, true),
		"zero replica timeout": lock.WithReplicas(1, 0, true),
		"negative margin":      lock.WithSafetyMargin(-time.Millisecond),
		"renew fraction 1":     lock.WithRenewFraction(1),
		"renew fraction 0":     lock.WithRenewFraction(0),
		"backoff max < min":    lock.WithWaitBackoff(time.Second, time.Millisecond),
		"nil option":           nil,
	} {
		if _, err := lock.New(c, opt); !errors.Is(err, lock.ErrInvalidOption) {
			t.Errorf("%s: %v, want ErrInvalidOption", name, err)
		}
	}
}

// The client points at a port nobody listens on: any round trip would fail
// with a connection error, not with the typed error.
func TestBadInputIsRejectedWithoutARoundTrip(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer c.Close()
	l, err := lock.New(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, ttl := range []time.Duration{0, -time.Second, time.Millisecond - 1, 999 * time.Microsecond} {
		if _, err := l.Acquire(ctx, "job", ttl); !errors.Is(err, lock.ErrInvalidTTL) {
			t.Errorf("acquire ttl %v: %v, want ErrInvalidTTL", ttl, err)
		}
		if _, err := l.AcquireWait(ctx, "job", ttl); !errors.Is(err, lock.ErrInvalidTTL) {
			t.Errorf("acquire-wait ttl %v: %v, want ErrInvalidTTL", ttl, err)
		}
		if err := l.WithLock(ctx, "job", ttl, func(context.Context, *lock.Lease) error { return nil }); !errors.Is(err, lock.ErrInvalidTTL) {
			t.Errorf("with-lock ttl %v: %v, want ErrInvalidTTL", ttl, err)
		}
	}
	// A name starting with '}' would give the lock and its counter an empty
	// hash tag, and so two Cluster slots.
	if _, err := l.Acquire(ctx, "}x", time.Second); !errors.Is(err, lock.ErrInvalidName) {
		t.Errorf("acquire with a name starting with '}': %v, want ErrInvalidName", err)
	}
	if _, err := l.Acquire(ctx, "", time.Second); !errors.Is(err, lock.ErrInvalidName) {
		t.Errorf("empty name: %v", err)
	}
	if _, err := l.Holder(ctx, ""); !errors.Is(err, lock.ErrInvalidName) {
		t.Errorf("holder of empty name: %v", err)
	}
	if _, err := l.AcquireWait(ctx, "", time.Second); !errors.Is(err, lock.ErrInvalidName) {
		t.Errorf("acquire-wait of empty name: %v", err)
	}
	if _, err := l.Release(ctx, nil); !errors.Is(err, lock.ErrInvalidLease) {
		t.Errorf("release nil: %v", err)
	}
	if _, err := l.Release(ctx, &lock.Lease{Name: "job", Token: 3}); !errors.Is(err, lock.ErrInvalidLease) {
		t.Errorf("release of a hand-made lease: %v", err)
	}
	if err := l.Extend(ctx, nil, time.Second); !errors.Is(err, lock.ErrInvalidLease) {
		t.Errorf("extend nil: %v", err)
	}
	if err := l.WithLock(ctx, "job", time.Second, nil); !errors.Is(err, lock.ErrInvalidOption) {
		t.Errorf("with-lock nil fn: %v", err)
	}
	// A TTL the safety margin would eat whole.
	tight, err := lock.New(c, lock.WithSafetyMargin(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := tight.WithLock(ctx, "job", time.Second, func(context.Context, *lock.Lease) error { return nil }); !errors.Is(err, lock.ErrInvalidTTL) {
		t.Errorf("ttl within the margin: %v, want ErrInvalidTTL", err)
	}
}

func TestLeaseDeadlineIsRequestTimePlusTTLMinusMargin(t *testing.T) {
	at := time.Now()
	l := lock.Lease{TTL: 300 * time.Millisecond, RequestedAt: at}
	if got := l.Deadline(20 * time.Millisecond); !got.Equal(at.Add(280 * time.Millisecond)) {
		t.Fatalf("deadline %v, want %v", got.Sub(at), 280*time.Millisecond)
	}
}
