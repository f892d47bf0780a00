package ratelimit_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

func preflight(t *testing.T, c redis.UniversalClient, opts ...ratelimit.Option) ratelimit.Report {
	t.Helper()
	l, err := ratelimit.New(goredisadapter.New(c), opts...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Preflight(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report: %+v", r)
	return r
}

func TestPreflightOfAFullyPrivilegedUserFindsNoProblem(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	r := preflight(t, s.Client(t))
	if !r.OK() || len(r.Refused) != 0 {
		t.Fatalf("report %+v, want no problem", r)
	}
	major, _, _ := strings.Cut(r.Version, ".")
	if n, err := strconv.Atoi(major); err != nil || n < 7 {
		t.Fatalf("version %q, want 7 or later", r.Version)
	}
}

// Losing a limit's key forgets only recent requests: an eviction policy
// that may evict any key, and no persistence, are not problems here.
func TestPreflightDoesNotReportAnEvictionPolicyOrNoPersistence(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--maxmemory-policy", "allkeys-lru")) // and the fixture's --save "" --appendonly no
	if r := preflight(t, s.Client(t)); !r.OK() {
		t.Fatalf("problems %q, want none", r.Problems)
	}
}

// A user that lacks one command the package doc's ACL lists gets a report
// naming it, for every command of the list; with the whole list and
// +info under ~app:*, a Limiter with a prefix under app: has no problem,
// and one with the default prefix, outside the pattern, is refused.
func TestPreflightReportsEveryDocumentedCommandTheACLUserMayNotRun(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	admin := s.Client(t)
	ctx := context.Background()
	user := func(name, cmds string) *redis.Client {
		rule := append([]any{"ACL", "SETUSER", name, "reset", "on", ">pw", "~app:*", "resetchannels"}, aclArgs(strings.Fields(cmds))...)
		if err := admin.Do(ctx, rule...).Err(); err != nil {
			t.Fatal(err)
		}
		if err := admin.ScriptFlush(ctx).Err(); err != nil { // so Preflight loads its script with EVAL_RO
			t.Fatal(err)
		}
		return s.Client(t, func(o *redis.Options) { o.Username, o.Password = name, "pw" })
	}
	full := user("full", leastPrivilege+" +info")
	if r := preflight(t, full, ratelimit.WithPrefix("app:rl:")); !r.OK() {
		t.Fatalf("the documented ACL: %+v, want no problem", r)
	}
	if r := preflight(t, full); r.OK() || len(r.Refused) != 1 || !strings.HasPrefix(r.Refused[0], "EVALSHA_RO ratelimit:") {
		t.Fatalf("the default prefix outside ~app:*: %+v, want the script refused", r)
	}
	for _, cmd := range strings.Fields(leastPrivilege) {
		less := strings.Join(slices.DeleteFunc(strings.Fields(leastPrivilege), func(c string) bool { return c == cmd }), " ")
		r := preflight(t, user("less"+strings.TrimPrefix(cmd, "+"), less+" +info"), ratelimit.WithPrefix("app:rl:"))
		name := strings.ToUpper(strings.TrimPrefix(cmd, "+"))
		if len(r.Refused) != 1 || r.OK() || r.Refused[0] != name && !strings.HasPrefix(r.Refused[0], name+" app:rl:") {
			t.Errorf("without %s: refused %q, want %s alone", cmd, r.Refused, name)
		}
	}
	// INFO is Preflight's only: without it, Preflight fails.
	l, err := ratelimit.New(goredisadapter.New(user("noinfo", leastPrivilege)), ratelimit.WithPrefix("app:rl:"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Preflight(ctx); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("without +info: %v; want INFO refused", err)
	}
}

// A server without EVALSHA_RO and EVAL_RO answers as Redis 6.2 does.
func TestPreflightOnAServerWithoutTheReadOnlyScriptCommandsSaysItNeedsRedis7(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--rename-command", "EVALSHA_RO", "", "--rename-command", "EVAL_RO", ""))
	l, err := ratelimit.New(goredisadapter.New(s.Client(t)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Preflight(context.Background())
	if !errors.Is(err, ratelimit.ErrRedisTooOld) {
		t.Fatalf("Preflight: %v; want ErrRedisTooOld", err)
	}
	t.Logf("the error reads: %v", err)
}
