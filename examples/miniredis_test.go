package examples_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/semaphore"
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
		if aerr == nil || !strings.Contains(aerr.Error(), "no struct library") {
			t.Errorf("ratelimit: Allow %v on miniredis: %v; want the error naming the struct library miniredis lacks", r, aerr)
		}
		if !errors.Is(perr, ratelimit.ErrRedisTooOld) {
			t.Errorf("ratelimit: Peek %v on miniredis: %v; want ErrRedisTooOld (its read-only script's flags line)", r, perr)
		}
	}
}

// The rest of what a team tests on miniredis (v2.40.0): a lock's waits and
// renewals, a semaphore's permits and an election work. The reads that
// run a read-only script (lock's Holder, semaphore's Holders: a script
// with a "#!lua flags=" line, which miniredis cannot compile) and every
// Preflight (miniredis answers no INFO server section) fail, with an error
// rather than a wrong answer. The README's "Testing without Redis" lists
// the same.
func TestOnMiniredisLocksSemaphoresAndElectionsWorkAndHoldersAndPreflightFail(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	client := goredisadapter.New(c)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	locker, err := lock.New(client)
	if err != nil {
		t.Fatal(err)
	}
	// WithLock renews the lease (every third of the TTL) while fn runs.
	// miniredis's clock moves only when told: moved on by 200ms after each
	// 250ms of work, 1s in all, the 300ms lease outlives fn only if the
	// renewals work.
	err = locker.WithLock(ctx, "job", 300*time.Millisecond, func(ctx context.Context, _ *lock.Lease) error {
		for range 5 {
			time.Sleep(250 * time.Millisecond)
			m.FastForward(200 * time.Millisecond)
		}
		// Holder's script does not run on miniredis (below): the key,
		// as lock's package doc lays it out.
		if n, err := c.Exists(ctx, "lock:{job}").Result(); err != nil || n != 1 {
			return fmt.Errorf("after 1s of a 300ms lease, lock:{job} exists %d times, %v", n, err)
		}
		return ctx.Err()
	})
	if err != nil {
		t.Fatalf("lock: WithLock on miniredis: %v", err)
	}
	lease, err := locker.AcquireWait(ctx, "job", time.Second)
	if err != nil {
		t.Fatalf("lock: AcquireWait of a free name on miniredis: %v", err)
	}
	if _, err := locker.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}

	issuer, err := semaphore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	a, err := issuer.Acquire(ctx, "pool", 2, time.Minute)
	if err != nil {
		t.Fatalf("semaphore: Acquire on miniredis: %v", err)
	}
	if _, err := issuer.Acquire(ctx, "pool", 2, time.Minute); err != nil {
		t.Fatalf("semaphore: a second Acquire on miniredis: %v", err)
	}
	if _, err := issuer.Acquire(ctx, "pool", 2, time.Minute); !errors.Is(err, semaphore.ErrFull) {
		t.Fatalf("semaphore: a third Acquire of 2 on miniredis: %v, want ErrFull", err)
	}
	if _, err := issuer.Release(ctx, a); err != nil {
		t.Fatalf("semaphore: Release on miniredis: %v", err)
	}
	if h, err := locker.Holder(ctx, "job"); !errors.Is(err, lock.ErrRedisTooOld) {
		t.Errorf("lock: Holder on miniredis: %+v, %v; want ErrRedisTooOld (its read-only script's flags line)", h, err)
	}
	holders, herr := issuer.Holders(ctx, "pool")
	t.Logf("semaphore: Holders on miniredis: %v, %v", holders, herr)
	if !errors.Is(herr, semaphore.ErrRedisTooOld) {
		t.Errorf("semaphore: Holders on miniredis: %v, %v; want ErrRedisTooOld (its read-only script's flags line)", holders, herr)
	}

	e, err := election.New(client, election.Config{Name: "scheduler", TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var epoch int64
	runCtx, stop := context.WithCancel(ctx)
	err = e.Run(runCtx, func(ctx context.Context, term election.Term) error {
		epoch = term.Epoch
		stop() // Run returns when its context ends
		return nil
	})
	if !errors.Is(err, context.Canceled) || epoch == 0 {
		t.Fatalf("election: Run on miniredis: %v (epoch %d)", err, epoch)
	}

	store, err := fence.New(client)
	if err != nil {
		t.Fatal(err)
	}
	limiter, err := ratelimit.New(client)
	if err != nil {
		t.Fatal(err)
	}
	for name, preflight := range map[string]func() error{
		"lock":      func() error { _, err := locker.Preflight(ctx); return err },
		"semaphore": func() error { _, err := issuer.Preflight(ctx); return err },
		"fence":     func() error { _, err := store.Preflight(ctx); return err },
		"ratelimit": func() error { _, err := limiter.Preflight(ctx); return err },
	} {
		err := preflight()
		t.Logf("%s: Preflight on miniredis: %v", name, err)
		if err == nil || !strings.Contains(err.Error(), "miniredis does not") {
			t.Errorf("%s: Preflight on miniredis: %v; want the error saying the checks need a server that reports its version", name, err)
		}
	}
}
