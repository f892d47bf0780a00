package lock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// events collects what a hook is given.
type events struct {
	mu  sync.Mutex
	all []lock.Event
}

func (ev *events) hook(_ context.Context, e lock.Event) {
	ev.mu.Lock()
	ev.all = append(ev.all, e)
	ev.mu.Unlock()
}

func (ev *events) take() []lock.Event {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	out := ev.all
	ev.all = nil
	return out
}

// only returns the one event e was expected to be, failing t otherwise.
func only(t *testing.T, got []lock.Event, op string, outcome string) lock.Event {
	t.Helper()
	if len(got) != 1 || got[0].Op != op || got[0].Outcome != outcome {
		t.Fatalf("events %+v, want one %s %s", got, op, outcome)
	}
	return got[0]
}

// Every call reports its decision with its facts; bad input, which gets no
// decision, reports nothing.
func TestHookSeesAcquireHeldExtendReleaseAndForceReleaseWithTheirFacts(t *testing.T) {
	s := redistest.Start(t)
	var ev events
	l := newLocker(t, s, lock.WithHook(ev.hook), lock.WithOwner("node-a"))
	ctx := context.Background()

	lease := mustAcquire(t, l, "res", time.Minute)
	e := only(t, ev.take(), "acquire", "acquired")
	if e.Name != "res" || e.Token != lease.Token || e.Latency <= 0 || e.Err != nil {
		t.Fatalf("acquire event %+v for lease token %d", e, lease.Token)
	}

	if _, err := l.Acquire(ctx, "res", time.Second); !errors.Is(err, lock.ErrHeld) {
		t.Fatal(err)
	}
	e = only(t, ev.take(), "acquire", "held")
	if e.Token != 0 || !e.Holder.Held || e.Holder.Token != lease.Token || e.Holder.Owner != "node-a" || e.Holder.TTL <= 0 {
		t.Fatalf("held event %+v, want holder token %d owner node-a", e, lease.Token)
	}

	if err := l.Extend(ctx, lease, time.Minute); err != nil {
		t.Fatal(err)
	}
	only(t, ev.take(), "extend", "ok")

	if ok, err := l.Release(ctx, lease); !ok || err != nil {
		t.Fatal(ok, err)
	}
	e = only(t, ev.take(), "release", "released")
	if e.Token != lease.Token || e.HeldFor <= 0 || e.HeldFor < e.Latency {
		t.Fatalf("release event %+v", e)
	}

	if err := l.Extend(ctx, lease, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatal(err)
	}
	if e = only(t, ev.take(), "extend", "not_held"); !errors.Is(e.Err, lock.ErrNotHeld) {
		t.Fatalf("extend event %+v", e)
	}
	if ok, _ := l.Release(ctx, lease); ok {
		t.Fatal("released twice")
	}
	only(t, ev.take(), "release", "not_held")

	mustAcquire(t, l, "res", time.Minute)
	ev.take()
	if ok, err := l.ForceRelease(ctx, "res"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	only(t, ev.take(), "force_release", "released")
	if ok, err := l.ForceRelease(ctx, "res"); ok || err != nil {
		t.Fatal(ok, err)
	}
	only(t, ev.take(), "force_release", "not_held")

	_, _ = l.Acquire(ctx, "", time.Second)
	_, _ = l.Acquire(ctx, "res", 0)
	_, _ = l.Release(ctx, nil)
	_, _ = l.AcquireWait(ctx, "", time.Second)
	if got := ev.take(); len(got) != 0 {
		t.Fatalf("bad input reported: %+v", got)
	}
}

// A failed round trip is reported as an error with the call's error.
func TestHookSeesAcquireErrorWhenTheClientIsClosed(t *testing.T) {
	s := redistest.Start(t)
	var ev events
	c := client(t, s)
	l := newLockerOn(t, s, c, lock.WithHook(ev.hook))
	_ = c.Close()
	_, err := l.Acquire(context.Background(), "res", time.Second)
	if err == nil {
		t.Fatal("acquire on a closed client succeeded")
	}
	if e := only(t, ev.take(), "acquire", "error"); e.Err != err {
		t.Fatalf("event error %v, want the call's %v", e.Err, err)
	}
}

// AcquireWait reports the whole wait, which cannot end before the holder's
// lease expires: at least the remaining TTL its first refusal reported.
func TestHookSeesAcquireWaitTimeAtLeastTheHoldersRemainingTTL(t *testing.T) {
	s := redistest.Start(t)
	var ev events
	l := newLocker(t, s, lock.WithHook(ev.hook))
	holder := newLocker(t, s)
	mustAcquire(t, holder, "res", 150*time.Millisecond)

	lease, err := l.AcquireWait(context.Background(), "res", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := ev.take()
	if len(got) < 3 || got[0].Op != "acquire" || got[0].Outcome != "held" {
		t.Fatalf("events %+v, want a refusal first", got)
	}
	last := got[len(got)-1]
	if last.Op != "wait" || last.Outcome != "acquired" || last.Token != lease.Token {
		t.Fatalf("last event %+v, want the wait, acquired with token %d", last, lease.Token)
	}
	if min := got[0].Holder.TTL - time.Millisecond; last.Latency < min {
		t.Fatalf("waited %v, less than the holder's remaining %v", last.Latency, got[0].Holder.TTL)
	}
	if a := got[len(got)-2]; a.Op != "acquire" || a.Outcome != "acquired" {
		t.Fatalf("event before the wait's %+v, want the winning acquire", a)
	}
}

// AcquireWait ended by its context reports an error with the context's.
func TestHookSeesAcquireWaitEndedByItsContext(t *testing.T) {
	s := redistest.Start(t)
	var ev events
	l := newLocker(t, s, lock.WithHook(ev.hook))
	mustAcquire(t, newLocker(t, s), "res", time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := l.AcquireWait(ctx, "res", time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	got := ev.take()
	last := got[len(got)-1]
	if last.Op != "wait" || last.Outcome != "error" || !errors.Is(last.Err, context.DeadlineExceeded) || last.Latency < 50*time.Millisecond {
		t.Fatalf("last event %+v, want the wait ended by its deadline after ≥ 50ms", last)
	}
}

// A lock deleted under WithLock: a renewal finds it gone, the lease is
// reported lost with that cause, and the release finds it already lost.
func TestHookSeesLeaseLostWithItsCauseAndTheReleaseThatFoundItGone(t *testing.T) {
	s := redistest.Start(t)
	var ev events
	l := newLocker(t, s, lock.WithHook(ev.hook))
	operator := newLocker(t, s)
	ctx := context.Background()
	// The first renewal comes a third of the TTL after the acquire: 1 s,
	// long after the force release however busy the machine (with 300 ms,
	// a renewal once came first, and succeeded).
	err := l.WithLock(ctx, "res", 3*time.Second, func(ctx context.Context, _ *lock.Lease) error {
		if ok, err := operator.ForceRelease(ctx, "res"); !ok || err != nil {
			t.Error(ok, err)
		}
		<-ctx.Done()
		return nil
	})
	if !errors.Is(err, lock.ErrLeaseLost) {
		t.Fatal(err)
	}
	var ops []string
	var lost lock.Event
	for _, e := range ev.take() {
		ops = append(ops, string(e.Op)+" "+string(e.Outcome))
		if e.Op == "lost" {
			lost = e
		}
	}
	want := "acquire acquired,extend not_held,lost not_held,release not_held"
	if strings.Join(ops, ",") != want {
		t.Fatalf("events %v, want %s", ops, want)
	}
	if !errors.Is(lost.Err, lock.ErrLeaseLost) || !errors.Is(lost.Err, lock.ErrNotHeld) || lost.HeldFor <= 0 || lost.Token == 0 {
		t.Fatalf("lost event %+v", lost)
	}
}

// A frozen server: no renewal comes back, and the lease is lost to the
// deadline.
func TestHookSeesLeaseLostToTheDeadlineWhenRedisIsFrozen(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	var ev events
	l := newLocker(t, s, lock.WithHook(ev.hook))
	lease := mustAcquire(t, l, "res", 200*time.Millisecond)
	k, err := l.Keep(context.Background(), lease, 60*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	s.Freeze(t)
	<-k.Context().Done()
	s.Thaw(t)
	_ = k.Stop()
	var lost []lock.Event
	for _, e := range ev.take() {
		if e.Op == "lost" {
			lost = append(lost, e)
		}
	}
	if len(lost) != 1 || lost[0].Outcome != "deadline" || !errors.Is(lost[0].Err, lock.ErrDeadline) {
		t.Fatalf("lost events %+v, want one lost to the deadline", lost)
	}
	if lost[0].HeldFor < 200*time.Millisecond-l2margin(200*time.Millisecond) {
		t.Fatalf("held for %v, less than the TTL minus the margin", lost[0].HeldFor)
	}
}

// l2margin is the default safety margin for ttl (see WithSafetyMargin).
func l2margin(ttl time.Duration) time.Duration { return ttl/100 + 2*time.Millisecond }

// WithLogger logs lost leases and releases that found theirs lost, and
// nothing else; without it nothing is logged, not even to slog's default.
func TestLoggerRecordsOnlyLostLeasesAndNothingByDefault(t *testing.T) {
	var def bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(old) })

	s := redistest.Start(t)
	var buf bytes.Buffer
	logged := newLocker(t, s, lock.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))))
	silent := newLocker(t, s)
	for i, l := range []*lock.Locker{logged, silent} {
		name := []string{"a", "b"}[i]
		err := l.WithLock(context.Background(), name, 300*time.Millisecond, func(ctx context.Context, _ *lock.Lease) error {
			_, _ = silent.Acquire(ctx, name, time.Second) // a refusal: not logged
			_, _ = silent.ForceRelease(ctx, name)
			<-ctx.Done()
			return nil
		})
		if !errors.Is(err, lock.ErrLeaseLost) {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("logged %d lines, want 2 (lost, then the release that found it lost):\n%s", len(lines), buf.String())
	}
	var lost, rel map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &lost); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &rel); err != nil {
		t.Fatal(err)
	}
	if lost["level"] != "WARN" || lost["msg"] != "lock: lease lost" || lost["name"] != "a" || !strings.Contains(lost["cause"].(string), "lease not held") {
		t.Fatalf("lost record %v", lost)
	}
	if rel["level"] != "WARN" || rel["msg"] != "lock: lease was lost before release" || rel["name"] != "a" {
		t.Fatalf("release record %v", rel)
	}
	if def.Len() != 0 {
		t.Fatalf("logged to slog's default logger:\n%s", def.String())
	}
}

func TestWithHookAndWithLoggerRefuseNil(t *testing.T) {
	s := redistest.Start(t)
	for _, o := range []lock.Option{lock.WithHook(nil), lock.WithLogger(nil)} {
		if _, err := lock.New(goredisadapter.New(client(t, s)), o); !errors.Is(err, lock.ErrInvalidOption) {
			t.Fatalf("got %v, want ErrInvalidOption", err)
		}
	}
}
