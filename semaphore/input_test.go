package semaphore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
)

// Bad input is refused with a typed error and no round trip: the client
// here points at nothing, so any call that reached the network would fail
// differently.
func TestBadInputIsRefusedWithATypedErrorBeforeAnyRoundTrip(t *testing.T) {
	if _, err := semaphore.New(nil); !errors.Is(err, semaphore.ErrNilClient) {
		t.Fatalf("New(nil): %v", err)
	}
	var nilClient *redis.Client
	if _, err := semaphore.New(goredisadapter.New(nilClient)); !errors.Is(err, semaphore.ErrNilClient) {
		t.Fatalf("New(goredisadapter.New(nil *redis.Client)): %v", err)
	}
	var nilAdapter *goredisadapter.Client
	if _, err := semaphore.New(nilAdapter); !errors.Is(err, semaphore.ErrNilClient) {
		t.Fatalf("New(nil *goredisadapter.Client): %v", err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer rdb.Close()
	nowhere := goredisadapter.New(rdb)
	for _, opt := range []semaphore.Option{
		nil, semaphore.WithPrefix(""), semaphore.WithPrefix("a{b"), semaphore.WithOwner(""),
		semaphore.WithSafetyMargin(-1), semaphore.WithRenewFraction(0), semaphore.WithRenewFraction(1),
		semaphore.WithWaitBackoff(0, time.Second), semaphore.WithWaitBackoff(time.Second, time.Millisecond),
		semaphore.WithHook(nil), semaphore.WithLogger(nil),
	} {
		if _, err := semaphore.New(nowhere, opt); !errors.Is(err, semaphore.ErrInvalidOption) {
			t.Errorf("New with a bad option: %v, want ErrInvalidOption", err)
		}
	}
	i, err := semaphore.New(nowhere)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fn := func(context.Context, *semaphore.Permit) error { return nil }
	for _, tc := range []struct {
		name string
		err  error
		call func() error
	}{
		{"empty name", semaphore.ErrInvalidName, func() error { _, err := i.Acquire(ctx, "", 1, time.Second); return err }},
		{"name emptying the hash tag", semaphore.ErrInvalidName, func() error { _, err := i.Acquire(ctx, "}x", 1, time.Second); return err }},
		{"capacity 0", semaphore.ErrInvalidCapacity, func() error { _, err := i.Acquire(ctx, "x", 0, time.Second); return err }},
		{"ttl under 1ms", semaphore.ErrInvalidTTL, func() error { _, err := i.Acquire(ctx, "x", 1, time.Microsecond); return err }},
		{"wait, capacity -1", semaphore.ErrInvalidCapacity, func() error { _, err := i.AcquireWait(ctx, "x", -1, time.Second); return err }},
		{"holders, empty name", semaphore.ErrInvalidName, func() error { _, err := i.Holders(ctx, ""); return err }},
		{"release nil", semaphore.ErrInvalidPermit, func() error { _, err := i.Release(ctx, nil); return err }},
		{"release a made-up permit", semaphore.ErrInvalidPermit, func() error { _, err := i.Release(ctx, &semaphore.Permit{ID: "x"}); return err }},
		{"extend nil", semaphore.ErrInvalidPermit, func() error { return i.Extend(ctx, nil, time.Second) }},
		{"with permit, nil fn", semaphore.ErrInvalidOption, func() error { return i.WithPermit(ctx, "x", 1, time.Second, nil) }},
		{"with permit, ttl too short to renew", semaphore.ErrInvalidTTL, func() error { return i.WithPermit(ctx, "x", 1, 2*time.Millisecond, fn) }},
	} {
		if err := tc.call(); !errors.Is(err, tc.err) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		}
	}
	// A real permit and a bad TTL: refused before the round trip too.
	s := redistest.Start(t)
	p := mustAcquire(t, newIssuer(t, s), "x", 1, time.Second)
	if err := i.Extend(ctx, p, 0); !errors.Is(err, semaphore.ErrInvalidTTL) {
		t.Errorf("extend by 0: %v, want ErrInvalidTTL", err)
	}
}

// A Keeper not made by Keep (zero, or nil) keeps nothing: its Context is
// already cancelled, with the error of its Stop as the cause, so that work
// started under it ends at once instead of meeting a nil context.
func TestContextOfAZeroKeeperIsCancelledWithErrInvalidPermitInsteadOfNil(t *testing.T) {
	for name, k := range map[string]*semaphore.Keeper{"zero": {}, "nil": nil} {
		ctx := k.Context()
		if ctx == nil {
			t.Errorf("Context of a %s Keeper is nil", name)
			continue
		}
		select {
		case <-ctx.Done():
		default:
			t.Errorf("Context of a %s Keeper is not cancelled", name)
		}
		if cause := context.Cause(ctx); !errors.Is(cause, semaphore.ErrInvalidPermit) {
			t.Errorf("cause of a %s Keeper's Context: %v, want ErrInvalidPermit", name, cause)
		}
		if err := k.Stop(); !errors.Is(err, semaphore.ErrInvalidPermit) {
			t.Errorf("Stop of a %s Keeper: %v, want ErrInvalidPermit", name, err)
		}
	}
}
