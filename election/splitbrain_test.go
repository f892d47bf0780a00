package election_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// TestHelperLeaderProcess is not a test: it is the old leader of the
// split-brain test, run in a process of its own (the test binary
// re-executed by redistest.StartChild) so that it can be frozen for real
// with SIGSTOP. Without a child configuration it returns at once.
func TestHelperLeaderProcess(t *testing.T) {
	var cfg redistest.LeaderConfig
	if child, err := redistest.ChildConfig(&cfg); !child || err != nil {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	c := redis.NewClient(&redis.Options{Addr: cfg.Addr, DisableIdentity: true, ContextTimeoutEnabled: true, ReadTimeout: time.Second})
	defer c.Close()
	e, err := election.New(goredisadapter.New(c), election.Config{
		Name: cfg.Name, NodeID: cfg.NodeID, Prefix: cfg.Prefix,
		TTL: cfg.TTL, RenewInterval: cfg.Renew, RetryInterval: cfg.Renew,
		Hook: reportingHook,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := redistest.ChildContext()
	defer cancel()
	_ = e.Run(ctx, func(ctx context.Context, term election.Term) error {
		return redistest.WriteAsLeader(ctx, term.Epoch, func(ctx context.Context) string {
			err := term.Fencer.Set(ctx, cfg.Key, fmt.Sprintf("child epoch %d", term.Epoch))
			if stale := (*fence.StaleError)(nil); errors.As(err, &stale) {
				return fmt.Sprintf("stale_highest_%d", stale.Highest)
			} else if err != nil {
				return "error"
			}
			return "ok"
		}, e.IsLeader)
	})
}

// reportingHook reports a child's transitions to its parent.
func reportingHook(_ context.Context, e election.Event) {
	switch e.Op {
	case "elected":
		redistest.Report("elected", "epoch", e.Epoch)
	case "demoted":
		redistest.Report("demoted", "epoch", e.Epoch, "reason", strings.ReplaceAll(e.Reason.String(), " ", "_"))
	}
}

// childLeader is a helper leader process for a test.
type childLeader struct{ *redistest.Child }

// startChild runs TestHelperLeaderProcess in a new process. The process is
// killed at cleanup, whatever state the test left it in, and with this one
// if this one dies.
func startChild(t *testing.T, cfg redistest.LeaderConfig) childLeader {
	t.Helper()
	c, err := redistest.StartChild(cfg, "-test.run=^TestHelperLeaderProcess$", "-test.count=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() {
			t.Logf("helper stderr: %s", c.Stderr())
		}
	})
	return childLeader{c}
}

// next waits for the first event of kind at index from or later that
// satisfies ok (nil for any), and returns it with its index.
func (c childLeader) next(t *testing.T, within time.Duration, from int, kind string, ok func(redistest.Event) bool) (redistest.Event, int) {
	t.Helper()
	ev, i, err := c.Wait(context.Background(), within, from, kind, ok)
	if err != nil {
		t.Fatal(err)
	}
	return ev, i
}

// The old leader runs in a process of its own, which is frozen with SIGSTOP
// for 1.5s under a 400ms lease. While it is frozen its lease expires and
// this process is elected; its fenced write with the new epoch is accepted.
// When the old leader thaws it writes with its old epoch before anything
// else and is refused, and it steps down. Both believed they led from the
// new election until that step-down: a window set by how long the old
// leader could not check, far longer than the TTL.
func TestSplitBrainWindowOnAFrozenProcessOutlastsTheTTLAndOnlyTheEpochRefusesTheOldLeader(t *testing.T) {
	s := redistest.Start(t)
	const ttl, renew, freeze = 400 * time.Millisecond, 100 * time.Millisecond, 1500 * time.Millisecond
	const slack = 250 * time.Millisecond
	prefix := s.Prefix() + "election:"
	key := s.Prefix() + "splitbrain:data"

	old := startChild(t, redistest.LeaderConfig{
		Addr: s.Addr(), Prefix: prefix, Name: "splitbrain", NodeID: "child", Key: key, TTL: ttl, Renew: renew,
	})
	elected, _ := old.next(t, 20*time.Second, 0, "elected", nil)
	oldEpoch := elected.Fields["epoch"]
	old.next(t, 5*time.Second, 0, "write", func(e redistest.Event) bool { return e.Fields["result"] == "ok" })

	c := client(t, s)
	store, err := fence.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	type write struct {
		epoch int64
		err   error
	}
	wrote := make(chan write, 1)
	cfg := baseConfig(s, "splitbrain", "parent", ttl, renew)
	cfg.Fence = store
	p := startNode(t, c, cfg, func(ctx context.Context, term election.Term) error {
		wrote <- write{term.Epoch, term.Fencer.Set(ctx, key, fmt.Sprintf("parent epoch %d", term.Epoch))}
		<-ctx.Done()
		return nil
	})
	if f := p.rec.nth(t, 5*time.Second, "follower", 1); strconv.FormatInt(f.leader.Epoch, 10) != oldEpoch {
		t.Fatalf("parent follows epoch %d, helper was elected with %s", f.leader.Epoch, oldEpoch)
	}

	frozen := time.Now()
	if err := old.Freeze(); err != nil {
		t.Fatal(err)
	}
	won := p.rec.nth(t, ttl+time.Second, "elected", 1)
	w := <-wrote
	if w.err != nil {
		t.Fatalf("new leader's fenced write with epoch %d: %v", w.epoch, w.err)
	}
	if !p.e.IsLeader() {
		t.Fatal("new leader does not report itself leader while the old one is frozen")
	}
	time.Sleep(time.Until(frozen.Add(freeze))) // the freeze is the point; nothing to wait for
	thawed := time.Now()
	if err := old.Thaw(); err != nil {
		t.Fatal(err)
	}

	// The first waking after the thaw: a write slowed by a loaded machine can
	// report a gap too, while the term is still valid.
	woke, i := old.next(t, 5*time.Second, 0, "woke", func(e redistest.Event) bool { return !e.At.Before(thawed) })
	staleWrite, _ := old.next(t, 5*time.Second, i+1, "write", nil)
	demoted, _ := old.next(t, 5*time.Second, 0, "demoted", nil)

	if want := fmt.Sprintf("stale_highest_%d", w.epoch); staleWrite.Fields["result"] != want {
		t.Errorf("old leader's first write on waking, with epoch %s: %s, want %s", staleWrite.Fields["epoch"], staleWrite.Fields["result"], want)
	}
	if got, err := store.Get(context.Background(), key); err != nil || got != fmt.Sprintf("parent epoch %d", w.epoch) {
		t.Errorf("data after the old leader's write: %q, %v; want the new leader's", got, err)
	}
	// IsLeader compares the clock with the term's local deadline, which
	// passed while the process was frozen: it is false from the first
	// instruction after the thaw. Only fn's context, cancelled by the
	// renewal goroutine once it runs, may still look alive at that moment.
	if woke.Fields["is_leader"] != "false" {
		t.Errorf("old leader's IsLeader on waking: %s, want false (its deadline had passed)", woke.Fields["is_leader"])
	}
	if r := demoted.Fields["reason"]; r != "deadline_passed" {
		t.Errorf("old leader demoted for %s, want deadline_passed", r)
	}
	if demoted.Fields["epoch"] != oldEpoch {
		t.Errorf("demoted epoch %s, want %s", demoted.Fields["epoch"], oldEpoch)
	}

	failover := won.at.Sub(frozen)
	window := demoted.At.Sub(won.at)
	t.Logf("failover on a frozen process took %.1fms (lease %v, renew %v)", ms(failover), ttl, renew)
	t.Logf("split-brain window: %.1fms (lease TTL %v, freeze %v): new leader elected (epoch %d) -> old leader (epoch %s) stepped down %.1fms after SIGCONT",
		ms(window), ttl, freeze, won.epoch, oldEpoch, ms(demoted.At.Sub(thawed)))
	t.Logf("old leader on waking: fn's context alive %s, IsLeader %s; its first write: %s", woke.Fields["ctx_alive"], woke.Fields["is_leader"], staleWrite.Fields["result"])
	if failover < ttl-renew-5*time.Millisecond || failover > ttl+slack {
		t.Errorf("failover took %v, want between %v and %v", failover, ttl-renew, ttl+slack)
	}
	if window <= ttl || window >= freeze+renew+slack {
		t.Errorf("split-brain window %v, want longer than the TTL %v and shorter than freeze + renew + slack (%v)", window, ttl, freeze+renew+slack)
	}
	if !p.e.IsLeader() {
		t.Error("new leader lost its lease while the old one woke")
	}
}
