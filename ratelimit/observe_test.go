package ratelimit_test

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
	"github.com/redis-primitives/go/ratelimit"
)

type decisions struct {
	mu  sync.Mutex
	all []ratelimit.Event
}

func (d *decisions) hook(_ context.Context, x ratelimit.Event) {
	d.mu.Lock()
	d.all = append(d.all, x)
	d.mu.Unlock()
}

func (d *decisions) take() []ratelimit.Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.all
	d.all = nil
	return out
}

// Allowed and rejected decisions reach the hook with the binding limit's
// name and the remaining allowance; bad input, decided before any round
// trip, does not.
func TestHookSeesAllowedAndRejectedWithTheBindingLimitsName(t *testing.T) {
	s := redistest.Start(t)
	var got decisions
	_, l := limiter(t, s, ratelimit.WithHook(got.hook))
	ctx := context.Background()
	perSecond := ratelimit.SlidingLog(2, time.Minute).Named("burst")
	perHour := ratelimit.SlidingCounter(100, time.Hour).Named("hourly")
	policy := ratelimit.Policy{perSecond, perHour}

	for range 3 {
		_, _ = l.Allow(ctx, "user:1", policy)
	}
	_, _ = l.Peek(ctx, "user:1", perHour)
	_, _ = l.Allow(ctx, "", policy)
	_, _ = l.AllowN(ctx, "user:1", perSecond, 0)
	_, _ = l.Allow(ctx, "user:1", nil)

	all := got.take()
	if len(all) != 4 {
		t.Fatalf("hook saw %d decisions, want 4: %+v", len(all), all)
	}
	type row struct {
		op        string
		outcome   string
		limit     string
		remaining int
		granted   int
	}
	want := []row{
		{"allow", "allowed", "burst", 1, 1},
		{"allow", "allowed", "burst", 0, 1},
		{"allow", "rejected", "burst", 0, 0},
		{"peek", "allowed", "hourly", 98, 0},
	}
	for i, d := range all {
		r := row{d.Op, d.Outcome, d.Limit.Name(), d.Remaining, d.Granted}
		if r != want[i] || d.Key != "user:1" || d.Latency <= 0 || d.Err != nil {
			t.Errorf("decision %d: %+v, want %+v", i, d, want[i])
		}
	}
	if all[2].RetryAfter <= 0 {
		t.Errorf("rejection without a retry-after: %+v", all[2])
	}
}

// A call that gets no answer from Redis is reported with its error and its
// limit, and logged; rejections are not logged, and nothing is logged
// without WithLogger, not even to slog's default logger.
func TestHookAndLoggerSeeARedisErrorAndTheLoggerNothingElse(t *testing.T) {
	var def bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(old) })

	s := redistest.Start(t)
	var got decisions
	var buf bytes.Buffer
	c, l := limiter(t, s, ratelimit.WithHook(got.hook), ratelimit.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))))
	_, silent := limiter(t, s)
	lim := ratelimit.GCRA(1, time.Hour, 1).Named("one")
	ctx := context.Background()
	for _, lm := range []*ratelimit.Limiter{l, silent} {
		_, _ = lm.Allow(ctx, "k", lim)
		if res, _ := lm.Allow(ctx, "k", lim); res.Allowed {
			t.Fatal("second request admitted")
		}
	}
	_ = c.Close()
	_, err := l.Allow(ctx, "k", lim)
	if err == nil {
		t.Fatal("allow on a closed client succeeded")
	}
	all := got.take()
	if len(all) != 3 {
		t.Fatalf("hook saw %d decisions, want 3", len(all))
	}
	if e := all[2]; e.Err != err || e.Outcome != "error" || e.Limit.Name() != "one" {
		t.Fatalf("failed decision %+v, want the call's error %v and limit one", e, err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("logged %d lines, want 1 (the error):\n%s", len(lines), buf.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["level"] != "WARN" || rec["msg"] != "ratelimit: no decision" || rec["key"] != "k" || rec["op"] != "allow" {
		t.Fatalf("record %v", rec)
	}
	if def.Len() != 0 {
		t.Fatalf("logged to slog's default logger:\n%s", def.String())
	}
}

func TestWithHookAndWithLoggerRefuseNil(t *testing.T) {
	s := redistest.Start(t)
	for _, o := range []ratelimit.Option{ratelimit.WithHook(nil), ratelimit.WithLogger(nil)} {
		if _, err := ratelimit.New(goredisadapter.New(s.Client(t)), o); !errors.Is(err, ratelimit.ErrInvalidOption) {
			t.Fatalf("got %v, want ErrInvalidOption", err)
		}
	}
}

// A Commit or Cancel the server refuses is a verdict on the reservation,
// not a Redis failure: it reaches the hook as "expired" or
// "settled" with its error, and only a call with no answer is
// "error". (As a Decision, all three were an Err, told apart by
// nothing a metric could count on.)
func TestRefusedSettlementsReachTheHookAsExpiredOrSettledNotAsErrors(t *testing.T) {
	clk := newClock(epoch)
	var got decisions
	c, l := limiter(t, redistest.Start(t), ratelimit.WithServerTimeForTests(clk.Now), ratelimit.WithHook(got.hook))
	var lose loseReply
	c.AddHook(&lose)
	ctx := context.Background()
	lim := ratelimit.SlidingLog(10, time.Hour)

	// Committed on the server, its reply lost; the Cancel that follows
	// finds it settled the other way.
	a := reserve(t, l, "k", lim, 4, time.Minute)
	lose.armed.Store(true)
	if _, err := a.Commit(ctx, 2); !errors.Is(err, errLost) {
		t.Fatalf("commit with its reply lost: %v", err)
	}
	if _, err := a.Cancel(ctx); !errors.Is(err, ratelimit.ErrSettled) {
		t.Fatalf("cancel after a commit: %v, want ErrSettled", err)
	}
	// Past its expiry.
	b := reserve(t, l, "k", lim, 1, time.Minute)
	clk.Set(b.Expires)
	if _, err := b.Commit(ctx, 1); !errors.Is(err, ratelimit.ErrExpired) {
		t.Fatalf("commit past the expiry: %v, want ErrExpired", err)
	}
	// More than reserved, and more than fits: 2 charged by a's commit, d
	// reserves 1, and of the 9 above it 7 fit: 8 charged in all.
	d := reserve(t, l, "k", lim, 1, time.Minute)
	if res, err := d.Commit(ctx, 10); err != nil || res.Allowed || res.Granted != 8 {
		t.Fatalf("commit of 10 with 7 left beside its 1: %+v, %v; want 8 charged, not allowed", res, err)
	}

	type row struct {
		op      string
		outcome string
		granted int
		err     error
	}
	want := []row{
		{"reserve", "allowed", 4, nil},
		{"commit", "error", 0, errLost},
		{"cancel", "settled", 0, ratelimit.ErrSettled},
		{"reserve", "allowed", 1, nil},
		{"commit", "expired", 0, ratelimit.ErrExpired},
		{"reserve", "allowed", 1, nil},
		{"commit", "rejected", 8, nil},
	}
	all := got.take()
	if len(all) != len(want) {
		t.Fatalf("hook saw %d events, want %d: %+v", len(all), len(want), all)
	}
	for i, e := range all {
		w := want[i]
		if e.Op != w.op || e.Outcome != w.outcome || e.Granted != w.granted || !errors.Is(e.Err, w.err) || (w.err == nil) != (e.Err == nil) {
			t.Errorf("event %d: %s %s granted %d err %v; want %s %s granted %d err %v", i, e.Op, e.Outcome, e.Granted, e.Err, w.op, w.outcome, w.granted, w.err)
		}
		if e.Key != "k" || e.Latency <= 0 || e.Limit != lim {
			t.Errorf("event %d: key %q latency %v limit %v", i, e.Key, e.Latency, e.Limit)
		}
	}
}

// A Wait reached the hook only as its attempts: rejections, then one
// admission, so a caller that waited 300 ms and got through looked like
// rejected calls plus an Allow of one round trip. Each Wait and WaitN now
// ends with a "wait" event: its outcome, the last attempt's Result and
// the whole call's latency; one that its context ends is "error" with
// the context's error; bad input, returned before any attempt, is not
// reported.
func TestWaitReachesTheHookAsOneEventWithTheWholeWait(t *testing.T) {
	s := redistest.Start(t)
	var got decisions
	_, l := limiter(t, s, ratelimit.WithHook(got.hook))
	ctx := context.Background()
	const every = 300 * time.Millisecond
	lim := ratelimit.GCRA(1, every, 1).Named("slow")
	if _, err := l.Allow(ctx, "user:1", lim); err != nil {
		t.Fatal(err)
	}
	got.take()

	res, err := l.Wait(ctx, "user:1", lim)
	if err != nil || !res.Allowed {
		t.Fatalf("wait: %+v, %v", res, err)
	}
	all := got.take()
	last := all[len(all)-1]
	t.Logf("a Wait of %v: %d events, the last %s/%s", last.Latency.Round(time.Millisecond), len(all), last.Op, last.Outcome)
	if len(all) < 3 || last.Op != "wait" || last.Outcome != "allowed" {
		t.Fatalf("events of a Wait through one rejection: %+v; want its attempts, then one wait, allowed", all)
	}
	for _, e := range all[:len(all)-1] {
		if e.Op != "allow" {
			t.Fatalf("an attempt reported as %q, want %q: %+v", e.Op, "allow", all)
		}
	}
	// The first attempt's RetryAfter, slept through, is part of the wait.
	if slept := all[0].RetryAfter; last.Latency < slept || last.Limit.Name() != "slow" || last.Key != "user:1" || last.Err != nil {
		t.Fatalf("wait %+v: want Latency >= %v slept, limit slow, key user:1, no error", last, slept)
	}

	// A deadline shorter than the wait ends it at once, as an error.
	dctx, cancel := context.WithTimeout(ctx, every/10)
	_, err = l.Wait(dctx, "user:1", lim)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait past its deadline: %v", err)
	}
	all = got.take()
	last = all[len(all)-1]
	if last.Op != "wait" || last.Outcome != "error" || !errors.Is(last.Err, context.DeadlineExceeded) ||
		last.RetryAfter <= 0 {
		t.Fatalf("wait past its deadline: %+v; want outcome error, the deadline's error and the RetryAfter that passed it", last)
	}

	// n beyond the Burst is refused before any attempt.
	if _, err := l.WaitN(ctx, "user:1", lim, 2); !errors.Is(err, ratelimit.ErrInvalidN) {
		t.Fatalf("WaitN beyond the burst: %v", err)
	}
	if all := got.take(); len(all) != 0 {
		t.Fatalf("bad input reached the hook: %+v", all)
	}
}
