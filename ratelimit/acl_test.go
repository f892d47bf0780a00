package ratelimit_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// leastPrivilege is the ACL the package doc lists.
const leastPrivilege = "+evalsha +eval +evalsha_ro +eval_ro +time +get +set +pexpire +zadd +zcount +zrange +zrangebyscore +zrem +zremrangebyscore +del"

// A user limited to ~app:* and the listed commands can Peek, Allow, AllowN,
// Take, Wait and Reset under each algorithm and a Policy, admitted and
// rejected; without any one of the listed commands some of that fails:
// the list is what ratelimit needs, and no more.
func TestUserLimitedToTheDocumentedACLDecidesEveryRuleAndNeedsEveryCommand(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	admin := s.Client(t)
	ctx := context.Background()
	user := 0
	run := func(cmds string) error {
		user++
		name := fmt.Sprintf("app%d", user)
		rule := append([]any{"ACL", "SETUSER", name, "reset", "on", ">pw", "~app:*"}, aclArgs(strings.Fields(cmds))...)
		for _, cmd := range [][]any{rule, {"SCRIPT", "FLUSH"}} {
			if err := admin.Do(ctx, cmd...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		c := s.Client(t, func(o *redis.Options) { o.Username, o.Password, o.ContextTimeoutEnabled = name, "pw", true })
		defer c.Close()
		l, err := ratelimit.New(goredisadapter.New(c), ratelimit.WithPrefix(fmt.Sprintf("app:rl:%d:", user)))
		if err != nil {
			t.Fatal(err)
		}
		return rateLimitPaths(ctx, l)
	}
	if err := run(leastPrivilege); err != nil {
		t.Fatalf("with %s: %v", leastPrivilege, err)
	}
	for _, cmd := range strings.Fields(leastPrivilege) {
		less := strings.Join(slices.DeleteFunc(strings.Fields(leastPrivilege), func(c string) bool { return c == cmd }), " ")
		err := run(less)
		if err == nil {
			t.Errorf("without %s every path still works: it does not belong in the list", cmd)
			continue
		}
		t.Logf("without %-18s %v", cmd, err)
	}
}

// rateLimitPaths runs every call under each rule on a fresh key, and
// returns the first failure.
func rateLimitPaths(ctx context.Context, l *ratelimit.Limiter) error {
	const window = 200 * time.Millisecond
	rules := []struct {
		name string
		rule ratelimit.Rule
	}{
		{"log", ratelimit.SlidingLog(2, window)},
		{"counter", ratelimit.SlidingCounter(2, window)},
		{"gcra", ratelimit.GCRA(2, window, 2)},
		{"policy", ratelimit.Policy{ratelimit.SlidingLog(2, window), ratelimit.SlidingCounter(3, window), ratelimit.GCRA(2, window, 2)}},
	}
	for _, r := range rules {
		key := "user:" + r.name
		fail := func(call string, res ratelimit.Result, err error) error {
			return fmt.Errorf("%s: %s: %+v, %w", r.name, call, res, err)
		}
		if res, err := l.Peek(ctx, key, r.rule); err != nil || !res.Allowed {
			return fail("peek", res, err)
		}
		if res, err := l.AllowN(ctx, key, r.rule, 2); err != nil || !res.Allowed {
			return fail("allow 2", res, err)
		}
		if res, err := l.Allow(ctx, key, r.rule); err != nil || res.Allowed {
			return fail("allow a third (rejected)", res, err)
		}
		if res, err := l.Take(ctx, key, r.rule, 2); err != nil || res.Granted != 0 {
			return fail("take (none left)", res, err)
		}
		wctx, cancel := context.WithTimeout(ctx, 10*window)
		res, err := l.Wait(wctx, key, r.rule)
		cancel()
		if err != nil || !res.Allowed {
			return fail("wait", res, err)
		}
		if err := l.Reset(ctx, key, r.rule); err != nil {
			return fail("reset", ratelimit.Result{}, err)
		}
		if res, err := l.Take(ctx, key, r.rule, 2); err != nil || res.Granted != 2 {
			return fail("take 2 after reset", res, err)
		}
		if err := reservationPaths(ctx, l, key, r.rule, window); err != nil {
			return fail("reservations", ratelimit.Result{}, err)
		}
	}
	return nil
}

func aclArgs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
