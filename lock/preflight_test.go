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
