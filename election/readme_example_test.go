package election_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// lead is the README's election quickstart, word for word
// (examples/snippets_test.go checks it).
func lead(ctx context.Context, rdb *redis.Client, nodeID string) error {
	e, err := election.New(goredisadapter.New(rdb), election.Config{Name: "scheduler", NodeID: nodeID})
	if err != nil {
		return err // a nil client or a bad Config
	}
	// Run returns when ctx ends, or on an error retrying cannot fix (an ACL
	// refusal, a Redis too old); other errors it retries.
	return e.Run(ctx, func(ctx context.Context, term election.Term) error {
		// Lead until ctx is cancelled: returning from fn ends the term.
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
			// Every side effect carries the epoch. On fence.ErrStale a newer
			// leader has written: the term is over, and Run contends again.
			if err := term.Fencer.Set(ctx, "schedule", nextRun()); err != nil {
				return err
			}
		}
	})
}

func nextRun() string { return time.Now().Add(time.Minute).Format(time.RFC3339) }

// Each branch of the README's quickstart: the leader writes with its
// epoch; a newer writer's token ends the term on fence.ErrStale and Run
// contends again, leading with a higher epoch; ctx's end returns its
// error. It takes the snippet's defaults (a 1 s tick, a RetryInterval of
// TTL/3 = 3.3 s sat out after the fenced-out term), so about 6 s.
func TestTheReadmesElectionSnippetWritesWithItsEpochAndLeadsAgainAfterAStaleWrite(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, redistest.Own()) // the snippet's names have no test prefix
	rdb := client(t, s)
	store, err := fence.New(goredisadapter.New(rdb))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- lead(ctx, rdb, "node-a") }()

	// waitFor polls the key's highest token until ok holds; the bound is
	// the snippet's RetryInterval, tick and TTL with room for a busy machine.
	waitFor := func(what string, ok func(highest int64, value string) bool) int64 {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			h, err := store.Highest(ctx, "schedule")
			if err != nil {
				t.Fatal(err)
			}
			v, err := store.Get(ctx, "schedule")
			if err != nil && !errors.Is(err, fence.ErrNotFound) {
				t.Fatal(err)
			}
			if ok(h, v) {
				return h
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("%s: not seen within 20s", what)
		return 0
	}
	first := waitFor("the leader's first write", func(h int64, v string) bool { return h > 0 && v != "" })

	newer := first + 1
	if err := store.Set(ctx, newer, "schedule", "a newer leader's"); err != nil {
		t.Fatal(err)
	}
	second := waitFor("a write of a new term after the stale one", func(h int64, v string) bool {
		return h > newer && v != "a newer leader's"
	})
	t.Logf("epochs: first term %d, the newer writer %d, the next term %d", first, newer, second)

	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after ctx's cancel returned %v, want context.Canceled", err)
	}
}

// The snippet's two error returns: New's (a nil client), and Run's on a
// refusal no retry fixes (an ACL without the scripts), returned without
// waiting for ctx.
func TestTheReadmesElectionSnippetReturnsANilClientAndAnACLRefusal(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := lead(ctx, nil, "node-a"); !errors.Is(err, election.ErrNilClient) {
		t.Fatalf("a nil client: %v, want ErrNilClient", err)
	}
	s := redistest.Start(t, redistest.Own())
	if err := client(t, s).Do(ctx, "ACL", "SETUSER", "noscripts", "on", ">pw", "~*", "&*",
		"+@all", "-eval", "-evalsha", "-eval_ro", "-evalsha_ro").Err(); err != nil {
		t.Fatal(err)
	}
	c := client(t, s, func(o *redis.Options) { o.Username, o.Password = "noscripts", "pw" })
	if err := lead(ctx, c, "node-a"); redisCode(err) != "NOPERM" {
		t.Fatalf("an ACL without the scripts: %v, want a redis.Error with code NOPERM", err)
	}
}
