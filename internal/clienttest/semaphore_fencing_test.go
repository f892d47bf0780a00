package clienttest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/fence/pgfence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/pgtest"
	"github.com/redis-primitives/go/semaphore"
)

// This test lives here, not in semaphore's module, because it writes
// PostgreSQL through pgfence: in semaphore's tests it made every user's
// go mod tidy of semaphore download pgx. It runs on go-redis only: what
// it proves is the permit's and the fences', not the client's.

// semHolderConfig is the configuration of a child permit holder: a semaphore
// Name of Capacity under Prefix on the Redis at Addr, and the item it works
// on: the fenced Redis Key, and the pgfence Row in the database at DSN.
type semHolderConfig struct {
	Addr, Prefix, Name, Key, DSN, Row string
	Capacity                          int
	TTL                               time.Duration
}

// TestHelperSemaphorePermitHolderProcess is not a test: it is the holder of the
// fencing test, run in a process of its own (the test binary re-executed by
// redistest.StartChild) so that it can be frozen for real with SIGSTOP.
// Without a child configuration it returns at once.
func TestHelperSemaphorePermitHolderProcess(t *testing.T) {
	var cfg semHolderConfig
	if child, err := redistest.ChildConfig(&cfg); !child || err != nil {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	ctx, cancel := redistest.ChildContext()
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: cfg.Addr, DisableIdentity: true, ContextTimeoutEnabled: true})
	defer c.Close()
	pool, err := pgxpool.New(ctx, cfg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	i, err := semaphore.New(goredisadapter.New(c), semaphore.WithPrefix(cfg.Prefix))
	if err != nil {
		t.Fatal(err)
	}
	fences, err := fence.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := pgfence.New()
	if err != nil {
		t.Fatal(err)
	}
	err = i.WithPermit(ctx, cfg.Name, cfg.Capacity, cfg.TTL, func(ctx context.Context, p *semaphore.Permit) error {
		redistest.Report("acquired", "token", p.Token)
		return redistest.WriteAsLeader(ctx, p.Token, func(ctx context.Context) string {
			value := fmt.Sprintf("child-token-%d", p.Token)
			return semVerdict(fences.Set(ctx, p.Token, cfg.Key, value)) + "/" + semVerdict(rows.Update(ctx, pool, cfg.Row, value, p.Token))
		}, func() bool { return ctx.Err() == nil })
	})
	redistest.Report("done", "permit_lost", errors.Is(err, semaphore.ErrPermitLost))
}

// semVerdict names a fenced write's outcome in one word.
func semVerdict(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, fence.ErrStale), errors.Is(err, pgfence.ErrStale):
		return "stale"
	}
	return "error"
}

// A holder of one of two permits works on job 7 in a process of its own,
// writing the job's Redis key and PostgreSQL row through fence and pgfence,
// and is frozen with SIGSTOP. Its permit expires by the server's clock
// while it is frozen; a waiter takes its place and writes job 7 with a
// larger token. When the frozen holder thaws it writes before it can
// notice anything, and both resources refuse it. The other live holder,
// fencing its own job, is refused nothing although its token is the oldest.
func TestAHolderFrozenPastItsPermitIsReplacedAndItsWritesAreRefusedByFenceAndPgfence(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	const ttl, slack = 400 * time.Millisecond, 250 * time.Millisecond
	prefix := s.Prefix() + "semaphore:"
	jobKey, otherKey := s.Prefix()+"job:7", s.Prefix()+"job:3"

	dsn := pgtest.NewDatabase(t)
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	rows, err := pgfence.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := rows.CreateTables(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := rows.Insert(ctx, pool, "job-7", "new", 1); err != nil {
		t.Fatal(err)
	}

	c := s.Client(t)
	i := newSemIssuer(t, goredisadapter.New(c), s)
	fences, err := fence.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	bystander := mustSemAcquire(t, i, "workers", 2, time.Minute)

	child, err := redistest.StartChild(semHolderConfig{
		Addr: s.Addr(), Prefix: prefix, Name: "workers", Capacity: 2, TTL: ttl,
		Key: jobKey, DSN: dsn, Row: "job-7",
	}, "-test.run=^TestHelperSemaphorePermitHolderProcess$", "-test.count=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		child.Stop()
		if t.Failed() {
			t.Logf("child stderr: %s", child.Stderr())
		}
	})
	acquired, _, err := child.Wait(ctx, 20*time.Second, 0, "acquired", nil)
	if err != nil {
		t.Fatal(err)
	}
	oldToken := acquired.Int("token")
	if _, _, err := child.Wait(ctx, 5*time.Second, 0, "write", func(e redistest.Event) bool { return e.Fields["result"] == "ok/ok" }); err != nil {
		t.Fatal(err)
	}

	frozen := time.Now()
	if err := child.Freeze(); err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, ttl+5*time.Second)
	defer cancel()
	next, err := i.AcquireWait(waitCtx, "workers", 2, time.Minute)
	if err != nil {
		t.Fatalf("the frozen holder's place: %v", err)
	}
	replacedAfter := time.Since(frozen)
	if next.Token <= oldToken {
		t.Fatalf("replacement's token %d, not above the frozen holder's %d", next.Token, oldToken)
	}
	value := fmt.Sprintf("replacement-token-%d", next.Token)
	if err := fences.Set(ctx, next.Token, jobKey, value); err != nil {
		t.Fatalf("replacement's fenced write: %v", err)
	}
	if err := rows.Update(ctx, pool, "job-7", value, next.Token); err != nil {
		t.Fatalf("replacement's pgfence update: %v", err)
	}
	// The oldest token of all, on the item its holder owns: accepted.
	if err := fences.Set(ctx, bystander.Token, otherKey, "bystander"); err != nil {
		t.Fatalf("the other live holder's write to its own job: %v", err)
	}

	from := len(child.Events())
	thawed := time.Now()
	if err := child.Thaw(); err != nil {
		t.Fatal(err)
	}
	// The first write begun after the thaw. A write the freeze caught
	// between its two halves is reported on thawing too: its Redis half,
	// sent before the freeze and landed before the replacement's, was
	// accepted, rightly, and its PostgreSQL half refused (seen once under
	// make test's load: "ok/stale").
	woke, _, err := child.Wait(ctx, 5*time.Second, from, "write", func(e redistest.Event) bool {
		if e.Time("sent").Before(thawed) {
			t.Logf("a write begun before the freeze ended on thawing: %s", e.Fields["result"])
			return false
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("holder frozen under a %v permit: replaced %v after the freeze (token %d -> %d); its first write on thawing: %s (redis/pg), with ctx alive=%s",
		ttl, replacedAfter, oldToken, next.Token, woke.Fields["result"], woke.Fields["ctx_alive"])
	if woke.Fields["result"] != "stale/stale" {
		t.Fatalf("the thawed holder's write: %s, want stale/stale", woke.Fields["result"])
	}
	// Renewed every ttl/3 until the freeze, the permit lapses within one
	// TTL of it.
	if replacedAfter > ttl+slack {
		t.Fatalf("replaced %v after the freeze, want within the TTL %v", replacedAfter, ttl)
	}
	if got := c.Get(ctx, jobKey).Val(); got != value {
		t.Fatalf("job 7 in Redis holds %q, want the replacement's %q", got, value)
	}
	if got, token, err := rows.Get(ctx, pool, "job-7"); err != nil || got != value || token != next.Token {
		t.Fatalf("job 7 row: %q token %d, %v; want the replacement's", got, token, err)
	}
	if _, _, err := child.Wait(ctx, 5*time.Second, from, "done", func(e redistest.Event) bool { return e.Fields["permit_lost"] == "true" }); err != nil {
		t.Fatalf("the thawed holder's WithPermit did not report the permit lost: %v", err)
	}
}
