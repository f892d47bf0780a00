package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

func TestNewRejectsNilClientAndBadOptions(t *testing.T) {
	if _, err := lock.New(nil); !errors.Is(err, lock.ErrNilClient) {
		t.Fatalf("nil client: %v", err)
	}
	// goredisadapter.New(nil) is a nil *goredisadapter.Client.
	if _, err := lock.New(goredisadapter.New(nil)); !errors.Is(err, lock.ErrNilClient) {
		t.Fatalf("typed nil client: %v", err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	c := goredisadapter.New(rdb)
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
	c := noServer(t)
	l, err := lock.New(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	refusesTTL(t, l, 0, -time.Second, time.Millisecond-1, 999*time.Microsecond)
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

// noServer returns a client of a port nobody listens on, which does not
// retry: any round trip fails at once with a connection error.
func noServer(t *testing.T) lock.Client {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return goredisadapter.New(c)
}

// refusesTTL checks that Acquire, AcquireWait and WithLock refuse each ttl
// with ErrInvalidTTL.
func refusesTTL(t *testing.T, l *lock.Locker, ttls ...time.Duration) {
	t.Helper()
	ctx := context.Background()
	for _, ttl := range ttls {
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
}

func TestLeaseDeadlineIsRequestTimePlusTTLMinusMargin(t *testing.T) {
	at := time.Now()
	l := lock.Lease{TTL: 300 * time.Millisecond, RequestedAt: at}
	if got := l.Deadline(20 * time.Millisecond); !got.Equal(at.Add(280 * time.Millisecond)) {
		t.Fatalf("deadline %v, want %v", got.Sub(at), 280*time.Millisecond)
	}
}

// ErrInvalidTTL's doc promises a refusal, without a round trip, of a TTL
// that leaves no time once the safety margin is taken off; Acquire used to
// send a 2ms one (default margin 2ms + TTL/100) and hand out a lease whose
// deadline was before its request. The client points at a port nobody
// listens on, so a TTL that got past the check fails with a connection
// error instead.
func TestATTLTheSafetyMarginEatsWholeIsRefusedWithoutARoundTrip(t *testing.T) {
	c := noServer(t)
	l, err := lock.New(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	refusesTTL(t, l, time.Millisecond, 2*time.Millisecond)
	_, err = l.Acquire(ctx, "job", 2*time.Millisecond)
	t.Logf("acquire 2ms: %v", err)
	// Above the margin, the TTL is sent.
	if _, err := l.Acquire(ctx, "job", 3*time.Millisecond); errors.Is(err, lock.ErrInvalidTTL) || err == nil {
		t.Errorf("acquire ttl 3ms (margin 2.03ms): %v, want a connection error", err)
	}
	// Without a margin, 1ms leaves time.
	bare, err := lock.New(c, lock.WithSafetyMargin(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.Acquire(ctx, "job", time.Millisecond); errors.Is(err, lock.ErrInvalidTTL) || err == nil {
		t.Errorf("acquire ttl 1ms without a margin: %v, want a connection error", err)
	}
}

// Extend refuses such a TTL too, before the round trip that would set it.
func TestExtendToATTLTheSafetyMarginEatsWholeIsRefused(t *testing.T) {
	s := redistest.Start(t)
	l := newLocker(t, s)
	ctx := context.Background()
	lease, err := l.Acquire(ctx, "job", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Extend(ctx, lease, 2*time.Millisecond); !errors.Is(err, lock.ErrInvalidTTL) {
		t.Errorf("extend to 2ms: %v, want ErrInvalidTTL", err)
	}
	if lease.TTL != time.Second {
		t.Errorf("lease TTL %v after the refused extend, want 1s unchanged", lease.TTL)
	}
	if pttl := client(t, s).PTTL(ctx, lockKey(s, "job")).Val(); pttl < 500*time.Millisecond {
		t.Errorf("lock's PTTL %v after the refused extend, want still near 1s", pttl)
	}
}

// A zero or nil Locker refuses CheckReplicaClocks as it refuses every
// other call, with or without replicas: it has no client to read the
// primary's clock with.
func TestCheckReplicaClocksOfAZeroLockerReturnsErrNilClientInsteadOfPanicking(t *testing.T) {
	ctx := context.Background()
	replica := noServer(t)
	var zero lock.Locker
	for name, l := range map[string]*lock.Locker{"zero": &zero, "nil": nil} {
		for _, replicas := range [][]lock.Client{{replica}, nil} {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s Locker, %d replicas: panicked: %v", name, len(replicas), r)
					}
				}()
				if problems, err := l.CheckReplicaClocks(ctx, time.Second, replicas...); !errors.Is(err, lock.ErrNilClient) {
					t.Errorf("%s Locker, %d replicas: %q, %v; want ErrNilClient", name, len(replicas), problems, err)
				}
			}()
		}
	}
}

// A nil replica client, as an interface or as the nil pointer an adapter's
// New(nil) returns, is refused with ErrNilClient: the Locker's own server
// answers, so only the replica's call could fail.
func TestCheckReplicaClocksOfANilReplicaReturnsErrNilClientInsteadOfPanicking(t *testing.T) {
	l := newLocker(t, redistest.Start(t))
	for name, replica := range map[string]lock.Client{"nil": nil, "goredisadapter.New(nil)": goredisadapter.New(nil)} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s replica: panicked: %v", name, r)
				}
			}()
			if problems, err := l.CheckReplicaClocks(context.Background(), time.Second, replica); !errors.Is(err, lock.ErrNilClient) {
				t.Errorf("%s replica: %q, %v; want ErrNilClient", name, problems, err)
			}
		}()
	}
}
