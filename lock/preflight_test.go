package lock_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
)

func TestPreflightReportsThatNothingPersistsTheCounter(t *testing.T) {
	s := redistest.Start(t, redistest.Own()) // the fixture's default: --save "" --appendonly no
	r, err := newLocker(t, s).Preflight(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report: %+v", r)
	if r.OK() || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "no persistence") {
		t.Fatalf("problems %q, want exactly the missing persistence", r.Problems)
	}
}

func TestPreflightReportsAPolicyThatCanEvictTheCounter(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--maxmemory-policy", "allkeys-lru", "--appendonly", "yes"))
	r, err := newLocker(t, s).Preflight(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.MaxMemoryPolicy != "allkeys-lru" || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "allkeys-lru") {
		t.Fatalf("report %+v, want the eviction policy as the one problem", r)
	}
}

func TestPreflightReportsSnapshotsOnlyAndNeverChangesConfig(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--save", "3600 1"))
	r, err := newLocker(t, s).Preflight(context.Background())
	if err != nil {
		t.Fatal(err)
	}
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

func TestPreflightPassesWithAppendOnlyAndNoEviction(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--appendonly", "yes"))
	r, err := newLocker(t, s).Preflight(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || !r.AppendOnly || r.MaxMemoryPolicy != "noeviction" {
		t.Fatalf("report %+v, want no problem", r)
	}
}

func TestPreflightReportsTheVersionAndEveryCommandTheACLUserMayNotRun(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--appendonly", "yes"))
	ctx := context.Background()
	r, err := newLocker(t, s).Preflight(ctx)
	if err != nil || !r.OK() || !strings.HasPrefix(r.Version, "7") && !strings.HasPrefix(r.Version, "8") || len(r.Refused) != 0 {
		t.Fatalf("default user: %+v, %v; want a 7.x+ version and nothing refused", r, err)
	}
	if err := s.Client(t).Do(ctx, "ACL", "SETUSER", "nopub", "on", ">pw", "~*", "&*", "+@all", "-publish", "-time").Err(); err != nil {
		t.Fatal(err)
	}
	c := client(t, s, func(o *redis.Options) { o.Username, o.Password = "nopub", "pw" })
	r, err = newLockerOn(t, s, c).Preflight(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report: %+v", r)
	if len(r.Refused) != 2 || !strings.HasPrefix(r.Refused[0], "PUBLISH") || !strings.HasPrefix(r.Refused[1], "TIME") || r.OK() {
		t.Fatalf("refused %q, want PUBLISH and TIME", r.Refused)
	}
}

// A user without CONFIG (a managed service's, or a least-privilege ACL)
// gets a report that says so, as fence's and semaphore's Preflight give,
// instead of an error that hid the version and the ACL findings.
func TestPreflightReportsACONFIGGETTheUserMayNotRunInsteadOfFailing(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--appendonly", "yes"))
	ctx := context.Background()
	if err := s.Client(t).Do(ctx, "ACL", "SETUSER", "noconfig", "on", ">pw", "~*", "&*", "+@all", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	l := newLockerOn(t, s, client(t, s, func(o *redis.Options) { o.Username, o.Password = "noconfig", "pw" }))
	r, err := l.Preflight(ctx)
	if err != nil {
		t.Fatalf("Preflight without CONFIG: %v, want a report", err)
	}
	if r.Version == "" || len(r.Refused) != 0 || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "CONFIG GET") {
		t.Fatalf("report %+v, want the version and only the refused CONFIG GET", r)
	}
}

// A user who may not run the check's read-only script gets a report that
// names it: no lock call would run either.
func TestPreflightReportsAScriptTheUserMayNotRunInsteadOfFailing(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--appendonly", "yes"))
	ctx := context.Background()
	if err := s.Client(t).Do(ctx, "ACL", "SETUSER", "noscripts", "on", ">pw", "~*", "&*", "+@all", "-evalsha_ro", "-eval_ro").Err(); err != nil {
		t.Fatal(err)
	}
	l := newLockerOn(t, s, client(t, s, func(o *redis.Options) { o.Username, o.Password = "noscripts", "pw" }))
	r, err := l.Preflight(ctx)
	if err != nil {
		t.Fatalf("Preflight without EVALSHA_RO: %v, want a report", err)
	}
	if len(r.Refused) != 1 || !strings.HasPrefix(r.Refused[0], "EVAL") || r.OK() {
		t.Fatalf("report %+v, want the refused script named", r)
	}
}

// Under memory pressure a volatile-* policy evicts keys with a TTL, held
// locks among them (ADR 0029): the report says so, where it was silent.
func TestPreflightReportsAVolatilePolicyThatCanEvictHeldLocks(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--maxmemory-policy", "volatile-lru", "--appendonly", "yes"))
	r, err := newLocker(t, s).Preflight(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "volatile-lru may evict held leases") {
		t.Fatalf("problems %q, want the held leases a volatile-lru policy may evict", r.Problems)
	}
}
