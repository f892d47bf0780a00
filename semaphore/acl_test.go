package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
)

// leastPrivilege is the ACL the package doc lists.
const leastPrivilege = "+evalsha +eval +evalsha_ro +eval_ro +time +zrange +zcount +zscore +zadd +zrem +hset +hdel +hmget +get +set +del +pexpire +publish +subscribe +info +config|get"

// A user limited to ~app:* &app:* and the listed commands runs every path
// of an Issuer (Preflight with nothing refused, Acquire, Holders, Extend,
// an acquire that drops expired permits, AcquireWait woken by a Release,
// WithPermit), and without any one of the listed commands some path fails:
// the list is what semaphore needs, and no more.
func TestUserLimitedToTheDocumentedACLRunsEveryPathAndNeedsEveryCommand(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	admin := s.Client(t)
	ctx := context.Background()
	user := 0
	// run creates a fresh user with exactly cmds, empties the script cache
	// (so a script's first call must load it with EVAL), and runs the paths.
	run := func(cmds string, preflight bool) error {
		user++
		name := fmt.Sprintf("app%d", user)
		rule := []any{"ACL", "SETUSER", name, "reset", "on", ">pw", "~app:*", "&app:*"}
		for _, c := range strings.Fields(cmds) {
			rule = append(rule, c)
		}
		if err := admin.Do(ctx, rule...).Err(); err != nil {
			t.Fatal(err)
		}
		if err := admin.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		c := s.Client(t, func(o *redis.Options) { o.Username, o.Password = name, "pw" })
		defer c.Close()
		prefix := fmt.Sprintf("app:semaphore:%d:", user)
		marked := func() bool { return admin.Exists(ctx, prefix+"{job}:waiting").Val() == 1 }
		return aclPaths(ctx, goredisadapter.New(c), prefix, marked, preflight)
	}
	if err := run(leastPrivilege, true); err != nil {
		t.Fatalf("with %s: %v", leastPrivilege, err)
	}
	// The user really is limited: a key outside app:* is refused.
	limited := s.Client(t, func(o *redis.Options) { o.Username, o.Password = fmt.Sprintf("app%d", user), "pw" })
	if err := limited.Get(ctx, "other:x").Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("GET outside app:*: %v; the test proves nothing", err)
	}
	var preflightOnly []string
	for _, cmd := range strings.Fields(leastPrivilege) {
		less := strings.Join(slices.DeleteFunc(strings.Fields(leastPrivilege), func(c string) bool { return c == cmd }), " ")
		if err := run(less, false); err != nil {
			t.Logf("without %-12s %v", cmd, err)
			continue
		}
		preflightOnly = append(preflightOnly, cmd)
		if err := run(less, true); err == nil {
			t.Errorf("without %s every path still works: it does not belong in the list", cmd)
		} else {
			t.Logf("without %-12s only Preflight fails: %v", cmd, err)
		}
	}
	if !slices.Equal(preflightOnly, []string{"+info", "+config|get"}) {
		t.Errorf("commands only Preflight needs: %q, want +info +config|get", preflightOnly)
	}
}

// aclPaths runs the Issuer's paths on c, with keys under prefix, then
// Preflight if asked, and returns the first failure. marked reports, as
// the admin sees it, whether a waiter has marked the semaphore. Every wait
// is bounded.
func aclPaths(ctx context.Context, c semaphore.Client, prefix string, marked func() bool, preflight bool) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	// The waiter's fallback comes later than its budget: only a published
	// release can wake it in time.
	i, err := semaphore.New(c, semaphore.WithPrefix(prefix), semaphore.WithWaitBackoff(10*time.Second, 10*time.Second))
	if err != nil {
		return err
	}
	const ttl, budget = 20 * time.Second, 4 * time.Second
	// 3ms: the shortest TTL that leaves time once the default safety
	// margin (TTL/100 + 2ms) is taken off.
	short, err := i.Acquire(ctx, "job", 2, 3*time.Millisecond)
	if err != nil {
		return fmt.Errorf("acquire: %w", err)
	}
	time.Sleep(5 * time.Millisecond) // short expires: the next acquire drops it
	p, err := i.Acquire(ctx, "job", 1, ttl)
	if err != nil {
		return fmt.Errorf("acquire after an expiry: %w", err)
	}
	if h, err := i.Holders(ctx, "job"); err != nil || len(h) != 1 || h[0].ID != p.ID {
		return fmt.Errorf("holders: %+v, %v (expired %s)", h, err, short.ID)
	}
	if err := i.Extend(ctx, p, ttl); err != nil {
		return fmt.Errorf("extend: %w", err)
	}
	woke := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, budget)
		defer cancel()
		q, err := i.AcquireWait(wctx, "job", 1, ttl)
		if err == nil {
			_, err = i.Release(ctx, q)
		}
		woke <- err
	}()
	if _, err := i.Acquire(ctx, "job", 1, ttl); !errors.Is(err, semaphore.ErrFull) {
		return fmt.Errorf("acquire while held: %w", err)
	}
	// Release once the waiter has subscribed and been refused again, which
	// marks the semaphore. Without SUBSCRIBE it never marks it.
	for !marked() {
		select {
		case err := <-woke:
			return fmt.Errorf("the waiter returned early: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	if ok, err := i.Release(ctx, p); err != nil || !ok {
		return fmt.Errorf("release: %v, %w", ok, err)
	}
	if err := <-woke; err != nil {
		return fmt.Errorf("AcquireWait: %w", err)
	}
	if err := i.WithPermit(ctx, "job", 1, time.Second, func(context.Context, *semaphore.Permit) error { return nil }); err != nil {
		return fmt.Errorf("WithPermit: %w", err)
	}
	if preflight {
		r, err := i.Preflight(ctx)
		if err != nil {
			return fmt.Errorf("preflight: %w", err)
		}
		if len(r.Refused) > 0 {
			return fmt.Errorf("preflight: refused %v", r.Refused)
		}
		// A refused CONFIG GET is reported, not an error: Preflight could
		// not read the eviction policy and persistence.
		for _, pr := range r.Problems {
			if strings.Contains(pr, "CONFIG") {
				return fmt.Errorf("preflight: %s", pr)
			}
		}
	}
	return nil
}
