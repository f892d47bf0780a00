package fence_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

func preflight(t *testing.T, c *redis.Client, keys ...string) fence.Report {
	t.Helper()
	st, err := fence.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.Preflight(context.Background(), keys...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report: %+v", r)
	return r
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func TestPreflightOfAFullyPrivilegedUserOnADurableServerFindsNoProblem(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--appendonly", "yes"))
	r := preflight(t, s.Client(t))
	if !r.OK() || len(r.Refused) != 0 || !r.AppendOnly || r.MaxMemoryPolicy != "noeviction" {
		t.Fatalf("report %+v, want no problem", r)
	}
	if major, _, _ := strings.Cut(r.Version, "."); atoi(major) < 7 {
		t.Fatalf("version %q, want 7 or later", r.Version)
	}
}

func TestPreflightReportsAPolicyThatCanEvictAMarkAndNoPersistence(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--maxmemory-policy", "allkeys-lru")) // and the fixture's --save "" --appendonly no
	r := preflight(t, s.Client(t))
	if r.MaxMemoryPolicy != "allkeys-lru" || r.AppendOnly || r.Save != "" || len(r.Problems) != 2 ||
		!strings.Contains(r.Problems[0], "allkeys-lru") || !strings.Contains(r.Problems[0], "stale write") ||
		!strings.Contains(r.Problems[1], "no persistence") {
		t.Fatalf("report %+v, want the eviction policy and the missing persistence", r)
	}
}

func TestPreflightReportsSnapshotsOnlyAndNeverChangesConfig(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--save", "3600 1"))
	r := preflight(t, s.Client(t))
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "RDB snapshots only") {
		t.Fatalf("problems %q, want the snapshot-only warning", r.Problems)
	}
	cfg, err := s.Client(t).ConfigGet(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if cfg["appendonly"] != "no" || cfg["save"] != "3600 1" || cfg["maxmemory-policy"] != "noeviction" {
		t.Fatalf("config changed: appendonly %q save %q policy %q", cfg["appendonly"], cfg["save"], cfg["maxmemory-policy"])
	}
}

// A user that lacks one command the package doc's ACL lists gets a report
// naming it (and the key it was checked on), for every command of the
// list; with the whole list and ~app:*, nothing is refused on app: keys,
// a tagged key and a scoped Store's key included.
func TestPreflightReportsEveryDocumentedCommandTheACLUserMayNotRun(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--appendonly", "yes"))
	admin := s.Client(t)
	ctx := context.Background()
	const preflightOnly = "+info +config|get"
	user := func(name, cmds string) *redis.Client {
		rule := append([]any{"ACL", "SETUSER", name, "reset", "on", ">pw", "~app:*", "resetchannels"}, anySlice(strings.Fields(cmds))...)
		if err := admin.Do(ctx, rule...).Err(); err != nil {
			t.Fatal(err)
		}
		if err := admin.ScriptFlush(ctx).Err(); err != nil { // so Preflight loads its script with EVAL_RO
			t.Fatal(err)
		}
		return s.Client(t, func(o *redis.Options) { o.Username, o.Password = name, "pw" })
	}
	full := user("full", leastPrivilege+" "+preflightOnly)
	if r := preflight(t, full, "app:x", "app:{u}:p"); !r.OK() {
		t.Fatalf("the documented ACL: %+v, want no problem", r)
	}
	scoped, err := fence.New(goredisadapter.New(full), fence.WithScope("app:{job}"))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := scoped.Preflight(ctx); err != nil || !r.OK() {
		t.Fatalf("a scoped Store under the documented ACL: %+v, %v; want no problem", r, err)
	}
	// Outside the pattern, the check itself is refused on that key: it
	// looks at the keys it was given.
	if r := preflight(t, full, "app:y", "other:x"); !slices.Equal(r.Refused, []string{"EVALSHA_RO other:x"}) || r.OK() {
		t.Fatalf("refused %q on app:y and other:x, want the script on other:x", r.Refused)
	}

	for _, cmd := range strings.Fields(leastPrivilege) {
		less := strings.Join(slices.DeleteFunc(strings.Fields(leastPrivilege), func(c string) bool { return c == cmd }), " ")
		c := user("less"+strings.TrimPrefix(cmd, "+"), less+" "+preflightOnly)
		st, err := fence.New(goredisadapter.New(c))
		if err != nil {
			t.Fatal(err)
		}
		r, err := st.Preflight(ctx, "app:x")
		name := strings.ToUpper(strings.TrimPrefix(cmd, "+"))
		if err != nil {
			t.Fatalf("without %s: %v", cmd, err)
		}
		if len(r.Refused) == 0 || r.OK() {
			t.Errorf("without %s: nothing refused", cmd)
		}
		for _, got := range r.Refused {
			if got != name && !strings.HasPrefix(got, name+" ") {
				t.Errorf("without %s: refused %q", cmd, r.Refused)
			}
		}
	}
}

func TestPreflightReportsACONFIGGETTheUserMayNotRunInsteadOfFailing(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--appendonly", "yes"))
	ctx := context.Background()
	if err := s.Client(t).Do(ctx, "ACL", "SETUSER", "noconfig", "on", ">pw", "~*", "&*", "+@all", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	r := preflight(t, s.Client(t, func(o *redis.Options) { o.Username, o.Password = "noconfig", "pw" }))
	if len(r.Refused) != 0 || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "CONFIG GET") || r.MaxMemoryPolicy != "" {
		t.Fatalf("report %+v, want only the refused CONFIG GET", r)
	}
}

// A server without EVALSHA_RO and EVAL_RO answers as Redis 6.2 does.
func TestPreflightOnAServerWithoutTheReadOnlyScriptCommandsSaysItNeedsRedis7(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--rename-command", "EVALSHA_RO", "", "--rename-command", "EVAL_RO", ""))
	st, err := fence.New(goredisadapter.New(s.Client(t)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Preflight(context.Background())
	if !errors.Is(err, fence.ErrRedisTooOld) {
		t.Fatalf("Preflight: %v; want ErrRedisTooOld", err)
	}
	t.Logf("the error reads: %v", err)
}

func TestPreflightRefusesAKeyAWriteWouldRefuseWithoutARoundTrip(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // nothing listens: a round trip would fail
	defer c.Close()
	st, err := fence.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]error{"": fence.ErrInvalidKey, "k:fence{k}": fence.ErrInvalidKey, "a{b": fence.ErrCrossSlot} {
		if _, err := st.Preflight(context.Background(), key); !errors.Is(err, want) {
			t.Errorf("Preflight(%q): %v; want %v", key, err, want)
		}
	}
	var nilStore *fence.Store
	if _, err := nilStore.Preflight(context.Background()); !errors.Is(err, fence.ErrNilClient) {
		t.Errorf("nil Store: %v; want ErrNilClient", err)
	}
}
