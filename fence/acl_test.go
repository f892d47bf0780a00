package fence_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// leastPrivilege is the ACL the package doc lists, with RPUSH for the
// caller's own Eval script below.
const leastPrivilege = "+evalsha +eval +evalsha_ro +eval_ro +get +set +hset +hget"

// A user limited to ~app:* and the listed commands can do every fenced
// write and read: the marks are under the data's prefix. Before the marks
// were renamed, an untagged key's mark ({app:x}:fence:hw:fence:hw) was
// outside ~app:*, and a write to app:x under such a user failed.
func TestUserLimitedToAppKeysAndTheListedCommandsCanWriteAndRead(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	admin := s.Client(t)
	ctx := context.Background()
	rule := append([]any{"ACL", "SETUSER", "app", "reset", "on", ">pw", "~app:*", "resetchannels"},
		anySlice(strings.Fields(leastPrivilege+" +rpush"))...)
	if err := admin.Do(ctx, rule...).Err(); err != nil {
		t.Fatal(err)
	}
	c := s.Client(t, func(o *redis.Options) { o.Username, o.Password = "app", "pw" })
	// The user really is limited: a key outside app:* is refused.
	if err := c.Eval(ctx, "return redis.call('SET', KEYS[1], 'x')", []string{"other:x"}).Err(); err == nil {
		t.Fatal("the restricted user may write outside app:*; the test proves nothing")
	}

	perKey, err := fence.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	scoped, err := fence.New(goredisadapter.New(c), fence.WithScope("app:{job}"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		st         *fence.Store
		keys       []string
		hash, list string
	}{
		{perKey, []string{"app:x", "app:{t}:y"}, "app:h", "app:h:log"},
		{scoped, []string{scoped.Key("x"), scoped.Key("y")}, scoped.Key("h"), scoped.Key("log")},
	} {
		st := tc.st
		for _, k := range tc.keys {
			if err := st.Set(ctx, 2, k, "v"); err != nil {
				t.Fatalf("set %q as the restricted user: %v", k, err)
			}
			wantStale(t, st.Set(ctx, 1, k, "old"), 1, 2)
			if got := mustGet(t, st, k); got != "v" {
				t.Fatalf("get %q = %q", k, got)
			}
			if h := mustHighest(t, st, k); h != 2 {
				t.Fatalf("highest %q = %d", k, h)
			}
		}
		if err := st.HSet(ctx, 2, tc.hash, "f", "v"); err != nil {
			t.Fatalf("hset %q: %v", tc.hash, err)
		}
		if v, err := st.HGet(ctx, tc.hash, "f"); err != nil || v != "v" {
			t.Fatalf("hget %q = %q, %v", tc.hash, v, err)
		}
		if _, err := st.Eval(ctx, 2, "redis.call('RPUSH', KEYS[2], ARGV[2])", []string{tc.list}, "e"); err != nil {
			t.Fatalf("eval as the restricted user: %v", err)
		}
	}
	if _, err := perKey.Get(ctx, "app:none"); !errors.Is(err, fence.ErrNotFound) {
		t.Fatalf("get of a missing key: %v", err)
	}
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
