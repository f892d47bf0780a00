package election_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// summary renders a node's events without times, for comparison, each
// epoch as its rank among all the epochs in terms (1 for the lowest), so
// that the comparison holds whatever the first epoch is.
func summary(r *recorder, terms ...*recorder) []string {
	var epochs []int64
	for _, t := range terms {
		for _, e := range t.all() {
			if e.kind == "elected" {
				epochs = append(epochs, e.epoch)
			}
		}
	}
	slices.Sort(epochs)
	rank := func(epoch int64) int { return slices.Index(epochs, epoch) + 1 }
	var out []string
	for _, e := range r.all() {
		switch e.kind {
		case "elected":
			out = append(out, fmt.Sprintf("elected %d", rank(e.epoch)))
		case "demoted":
			out = append(out, fmt.Sprintf("demoted %d %v", rank(e.epoch), e.reason))
		case "follower":
			out = append(out, fmt.Sprintf("follower of %s", e.leader.NodeID))
		}
	}
	return out
}

// Two nodes pass leadership back and forth: a resignation (fn returns), a
// shutdown. Each transition reaches the Hook exactly once, in order,
// however many times a follower retried in between (it waits across several
// of the leader's renewals here), and when both Runs have returned no
// goroutine of theirs is left.
func TestHookSeesEachTransitionOnceAndRunLeavesNoGoroutine(t *testing.T) {
	s := redistest.Start(t)
	c1, c2 := client(t, s), client(t, s)
	ignore := goleak.IgnoreCurrent()
	const ttl, renew = 400 * time.Millisecond, 50 * time.Millisecond

	resign := make(chan struct{})
	var terms atomic.Int32
	a := startNode(t, c1, baseConfig(s, "observer", "a", ttl, renew), func(ctx context.Context, term election.Term) error {
		if terms.Add(1) == 1 { // a's first term
			select {
			case <-resign:
				return nil // resigns: the term was only for this piece of work
			case <-ctx.Done():
			}
		}
		<-ctx.Done()
		return nil
	})
	a.rec.nth(t, 5*time.Second, "elected", 1)
	b := startNode(t, c2, baseConfig(s, "observer", "b", ttl, renew), nil)
	b.rec.nth(t, 5*time.Second, "follower", 1)
	time.Sleep(4 * renew) // b waits across several renewals of a's; nothing to report

	close(resign)
	b.rec.nth(t, ttl, "elected", 1)
	a.rec.nth(t, 5*time.Second, "follower", 1) // a sat out one retry interval, then found b leading
	time.Sleep(4 * renew)
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
	a.rec.nth(t, ttl, "elected", 2)
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}

	wantA := []string{"elected 1", "demoted 1 resigned", "follower of b", "elected 3", "demoted 3 stopped"}
	wantB := []string{"follower of a", "elected 2", "demoted 2 stopped"}
	if got := summary(a.rec, a.rec, b.rec); !slices.Equal(got, wantA) {
		t.Errorf("node a saw %q, want %q", got, wantA)
	}
	if got := summary(b.rec, a.rec, b.rec); !slices.Equal(got, wantB) {
		t.Errorf("node b saw %q, want %q", got, wantB)
	}
	t.Logf("a: %q", summary(a.rec, a.rec, b.rec))
	t.Logf("b: %q", summary(b.rec, a.rec, b.rec))
	if err := goleak.Find(ignore); err != nil {
		t.Errorf("goroutines left after Run returned: %v", err)
	}
}

// Watchers need not contend: an Elector that never runs asks Redis who
// leads, and hears that nobody does once the leader has stopped.
func TestFollowerSeesWhoLeadsWithoutContending(t *testing.T) {
	s := redistest.Start(t)
	watcher, err := election.New(goredisadapter.New(client(t, s)), baseConfig(s, "watch", "watcher", time.Second, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := watcher.Leader(ctx); !errors.Is(err, election.ErrNoLeader) {
		t.Fatalf("before any election: %v, want ErrNoLeader", err)
	}
	l := startNode(t, client(t, s), baseConfig(s, "watch", "leader", time.Second, 200*time.Millisecond), nil)
	epoch := l.rec.nth(t, 5*time.Second, "elected", 1).epoch
	for range 3 {
		info, err := watcher.Leader(ctx)
		if err != nil || info.NodeID != "leader" || info.Epoch != epoch || info.TTL <= 0 || info.TTL > time.Second {
			t.Fatalf("watcher sees %+v, %v; want leader with epoch %d", info, err, epoch)
		}
		time.Sleep(250 * time.Millisecond) // across a renewal
	}
	if watcher.IsLeader() {
		t.Error("a watcher that never ran claims to lead")
	}
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := watcher.Leader(ctx); !errors.Is(err, election.ErrNoLeader) {
		t.Errorf("after the leader stopped (and released): %v, want ErrNoLeader", err)
	}
}

// An fn that fails while it leads ends Run with its error, and the lease is
// released so that another node need not wait for it to expire.
func TestLeaderFnErrorEndsRunAndReleasesTheLease(t *testing.T) {
	s := redistest.Start(t)
	boom := errors.New("boom")
	e, err := election.New(goredisadapter.New(client(t, s)), baseConfig(s, "fail", "a", 10*time.Second, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	err = e.Run(context.Background(), func(ctx context.Context, term election.Term) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("Run: %v, want fn's error", err)
	}
	if _, err := e.Leader(context.Background()); !errors.Is(err, election.ErrNoLeader) {
		t.Errorf("after fn failed: %v, want ErrNoLeader (released, not left for a 10s TTL)", err)
	}
}

// Other goroutines write in the leader's name through Term; a snapshot kept
// past the term is refused once the next term has written.
func TestTermSnapshotWritesAreFencedAfterTheTermEnds(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s)
	const ttl, renew = time.Second, 200 * time.Millisecond
	a := startNode(t, c, baseConfig(s, "snap", "a", ttl, renew), nil)
	a.rec.nth(t, 5*time.Second, "elected", 1)
	old, ok := a.e.Term()
	if !ok {
		t.Fatal("leader has no term")
	}
	ctx := context.Background()
	key := s.Prefix() + "snap:data"
	if err := old.Fencer.Set(ctx, key, "a"); err != nil {
		t.Fatal(err)
	}
	b := startNode(t, client(t, s), baseConfig(s, "snap", "b", ttl, renew), nil)
	b.rec.nth(t, 5*time.Second, "follower", 1)
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	b.rec.nth(t, ttl, "elected", 1)
	if _, ok := a.e.Term(); ok {
		t.Error("a stopped node still has a term")
	}
	next, ok := b.e.Term()
	if !ok || next.Epoch <= old.Epoch {
		t.Fatalf("new term %+v (%v), want an epoch above %d", next, ok, old.Epoch)
	}
	if err := next.Fencer.Set(ctx, key, "b"); err != nil {
		t.Fatal(err)
	}
	if err := old.Fencer.Set(ctx, key, "a again"); !errors.Is(err, fence.ErrStale) {
		t.Errorf("write with the old term's snapshot: %v, want refused as stale", err)
	}
}

// A fn that ends its goroutine with runtime.Goexit (t.Fatal in a test)
// never returns a value; the term must end anyway, the lease be released,
// and Run return, instead of leading on forever.
func TestFnEndingItsGoroutineEndsTheTermAndRun(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s)
	e, err := election.New(goredisadapter.New(c), baseConfig(s, "goexit", "node", time.Second, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- e.Run(context.Background(), func(context.Context, election.Term) error {
			runtime.Goexit()
			return nil
		})
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Run returned nil after fn ended its goroutine")
		}
		t.Logf("Run returned: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run still leading 5s after fn ended its goroutine")
	}
	if e.IsLeader() {
		t.Fatal("still leader after Run returned")
	}
}
