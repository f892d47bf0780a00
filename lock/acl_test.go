package lock_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// leastPrivilege is the ACL the package doc lists for the default (hybrid)
// tokens. WithCounterTokens swaps +time for +incr.
const leastPrivilege = "+evalsha +eval +evalsha_ro +eval_ro +get +set +pttl +del +pexpire +mget +time +publish +subscribe +info +config|get"

// counterTokenPrivilege is leastPrivilege for WithCounterTokens.
func counterTokenPrivilege() string {
	f := slices.DeleteFunc(strings.Fields(leastPrivilege), func(c string) bool { return c == "+time" })
	return strings.Join(append(f, "+incr"), " ")
}

// A user limited to ~app:* &app:* and the listed commands can run every
// main path of a Locker (Preflight with nothing refused, Acquire, Holder,
// Extend, AcquireWait woken by a Release, WithLock, ForceRelease), and
// without any one of the listed commands some path fails: the list is
// what lock needs, and no more.
func TestUserLimitedToTheDocumentedACLRunsEveryPathAndNeedsEveryCommand(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	admin := s.Client(t)
	ctx := context.Background()
	user := 0
	// run creates a fresh user with exactly cmds, empties the script cache
	// (so a script's first call must load it with EVAL), and runs the paths.
	run := func(cmds string, preflight bool, opts ...lock.Option) error {
		user++
		name := fmt.Sprintf("app%d", user)
		rule := append([]any{"ACL", "SETUSER", name, "reset", "on", ">pw", "~app:*", "&app:*"}, anySlice(strings.Fields(cmds))...)
		if err := admin.Do(ctx, rule...).Err(); err != nil {
			t.Fatal(err)
		}
		if err := admin.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		c := client(t, s, func(o *redis.Options) { o.Username, o.Password = name, "pw" })
		defer c.Close()
		return aclPaths(ctx, goredisadapter.New(c), fmt.Sprintf("app:lock:%d:", user), preflight, opts...)
	}
	for _, tc := range []struct {
		name string
		cmds string
		opts []lock.Option
	}{
		{"hybrid tokens", leastPrivilege, nil},
		{"counter tokens", counterTokenPrivilege(), []lock.Option{lock.WithCounterTokens()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var preflightOnly []string
			if err := run(tc.cmds, true, tc.opts...); err != nil {
				t.Fatalf("with %s: %v", tc.cmds, err)
			}
			// The user really is limited: a key outside app:* is refused.
			c := client(t, s, func(o *redis.Options) { o.Username, o.Password = fmt.Sprintf("app%d", user), "pw" })
			if err := c.Get(ctx, "other:x").Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
				t.Fatalf("GET outside app:*: %v; the test proves nothing", err)
			}
			for _, cmd := range strings.Fields(tc.cmds) {
				less := strings.Join(slices.DeleteFunc(strings.Fields(tc.cmds), func(c string) bool { return c == cmd }), " ")
				// Preflight checks the whole list itself: first show that
				// the operations need the command, where they do.
				err := run(less, false, tc.opts...)
				if err != nil {
					t.Logf("without %-12s %v", cmd, err)
					continue
				}
				preflightOnly = append(preflightOnly, cmd)
				if err := run(less, true, tc.opts...); err == nil {
					t.Errorf("without %s every path still works: it does not belong in the list", cmd)
				} else {
					t.Logf("without %-12s only Preflight fails: %v", cmd, err)
				}
			}
			if !slices.Equal(preflightOnly, []string{"+info", "+config|get"}) {
				t.Errorf("commands only Preflight needs: %q, want +info +config|get", preflightOnly)
			}
		})
	}
}

// aclPaths runs lock's main paths on c, with keys under prefix, then
// Preflight if asked, and returns the first failure. Every wait is bounded.
func aclPaths(ctx context.Context, c lock.Client, prefix string, preflight bool, opts ...lock.Option) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	renewed := make(chan struct{}, 64)
	l, err := lock.New(c, append([]lock.Option{lock.WithPrefix(prefix), lock.WithHook(func(_ context.Context, e lock.Event) {
		if e.Op == "extend" && e.Outcome == "ok" {
			renewed <- struct{}{}
		}
	})}, opts...)...)
	if err != nil {
		return err
	}
	// The holder's lease outlives the waiter's budget, and the waiter's
	// fallback retry comes later still: only a published release can wake
	// the waiter in time.
	const ttl, budget = 20 * time.Second, 4 * time.Second
	lease, err := l.Acquire(ctx, "job", ttl)
	if err != nil {
		return fmt.Errorf("acquire: %w", err)
	}
	h, err := l.Holder(ctx, "job")
	if err != nil || !h.Held || h.Token != lease.Token {
		return fmt.Errorf("holder: %+v, %v", h, err)
	}
	if err := l.Extend(ctx, lease, ttl); err != nil {
		return fmt.Errorf("extend: %w", err)
	}

	var refusals atomic.Int32
	refused := make(chan struct{}, 8)
	waiter, err := lock.New(c, append([]lock.Option{lock.WithPrefix(prefix), lock.WithWaitBackoff(ttl, ttl),
		lock.WithHook(func(_ context.Context, e lock.Event) {
			if e.Op == "acquire" && e.Outcome == "held" {
				refusals.Add(1)
				refused <- struct{}{}
			}
		})}, opts...)...)
	if err != nil {
		return err
	}
	wctx, wcancel := context.WithTimeout(ctx, budget)
	defer wcancel()
	type got struct {
		lease *lock.Lease
		err   error
	}
	waited := make(chan got, 1)
	go func() {
		l, err := waiter.AcquireWait(wctx, "job", ttl)
		waited <- got{l, err}
	}()
	// The second refusal is the retry made once subscribed, which marks the
	// lock so that its release is published.
	for refusals.Load() < 2 {
		select {
		case <-refused:
		case w := <-waited:
			return fmt.Errorf("acquire wait returned before it was refused twice: %v", w.err)
		}
	}
	if ok, err := l.Release(ctx, lease); err != nil || !ok {
		return fmt.Errorf("release: %v, %w", ok, err)
	}
	w := <-waited
	if w.err != nil {
		return fmt.Errorf("acquire wait, woken by a release: %w", w.err)
	}
	if ok, err := waiter.Release(ctx, w.lease); err != nil || !ok {
		return fmt.Errorf("release the waiter's lease: %v, %w", ok, err)
	}

	<-renewed // the Extend above
	err = l.WithLock(ctx, "with", time.Second, func(ctx context.Context, lease *lock.Lease) error {
		select { // a renewal, due after a third of the TTL
		case <-renewed:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("no renewal: %w", context.Cause(ctx))
		}
	})
	if err != nil {
		return fmt.Errorf("with lock: %w", err)
	}

	if _, err := l.Acquire(ctx, "stuck", ttl); err != nil {
		return fmt.Errorf("acquire: %w", err)
	}
	if ok, err := l.ForceRelease(ctx, "stuck"); err != nil || !ok {
		return fmt.Errorf("force release: %v, %w", ok, err)
	}
	if h, err := l.Holder(ctx, "stuck"); err != nil || h.Held {
		return fmt.Errorf("holder after force release: %+v, %w", h, err)
	}
	if !preflight {
		return nil
	}
	r, err := l.Preflight(ctx)
	if err != nil {
		return fmt.Errorf("preflight: %w", err)
	}
	if len(r.Refused) > 0 {
		return fmt.Errorf("preflight: refused %q", r.Refused)
	}
	// A refused CONFIG GET is reported, not an error: Preflight could not
	// read the eviction policy and persistence.
	for _, pr := range r.Problems {
		if strings.Contains(pr, "CONFIG") {
			return fmt.Errorf("preflight: %s", pr)
		}
	}
	return nil
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
