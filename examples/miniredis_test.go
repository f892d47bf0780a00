package examples_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/ratelimit"
)

// What runs on miniredis (an in-process Redis for tests, which this
// project does not depend on outside this module): lock and fence do;
// ratelimit's scripts do not, so ratelimit/ratelimittest stands in for a
// server there. Measured on miniredis v2.40.0.
func TestOnMiniredisLockAndFenceWorkAndRatelimitsScriptsDoNot(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()

	locker, err := lock.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	lease, err := locker.Acquire(ctx, "job", 10*time.Second)
	if err != nil {
		t.Fatalf("lock: Acquire on miniredis: %v", err)
	}
	var held *lock.HeldError
	if _, err := locker.Acquire(ctx, "job", 10*time.Second); !errors.As(err, &held) {
		t.Fatalf("lock: a second Acquire on miniredis: %v, want a HeldError", err)
	}
	if _, err := locker.Release(ctx, lease); err != nil {
		t.Fatalf("lock: Release on miniredis: %v", err)
	}

	store, err := fence.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Set(ctx, 2, "account:7", "100"); err != nil {
		t.Fatalf("fence: Set on miniredis: %v", err)
	}
	if err := store.Set(ctx, 1, "account:7", "90"); !errors.Is(err, fence.ErrStale) {
		t.Fatalf("fence: a stale Set on miniredis: %v, want ErrStale", err)
	}

	limiter, err := ratelimit.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []ratelimit.Rule{
		ratelimit.SlidingLog(10, time.Minute), ratelimit.SlidingCounter(10, time.Minute), ratelimit.GCRA(10, time.Minute, 5),
		ratelimit.Policy{ratelimit.SlidingLog(10, time.Minute), ratelimit.GCRA(10, time.Minute, 5)},
	} {
		_, aerr := limiter.Allow(ctx, "k", r)
		_, perr := limiter.Peek(ctx, "k", r)
		t.Logf("ratelimit on miniredis, %v: Allow: %v; Peek: %v", r, aerr, perr)
		if aerr == nil && perr == nil {
			t.Errorf("ratelimit: %v decided on miniredis; the documentation says its scripts do not run there", r)
		}
	}
}
