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

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

type decisions struct {
	mu  sync.Mutex
	all []ratelimit.Decision
}

func (d *decisions) hook(_ context.Context, x ratelimit.Decision) {
	d.mu.Lock()
	d.all = append(d.all, x)
	d.mu.Unlock()
}

func (d *decisions) take() []ratelimit.Decision {
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
		allowed   bool
		limit     string
		remaining int
		granted   int
	}
	want := []row{
		{"allow", true, "burst", 1, 1},
		{"allow", true, "burst", 0, 1},
		{"allow", false, "burst", 0, 0},
		{"peek", true, "hourly", 98, 0},
	}
	for i, d := range all {
		r := row{d.Op, d.Allowed, d.Limit.Name(), d.Remaining, d.Granted}
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
	if e := all[2]; e.Err != err || e.Allowed || e.Limit.Name() != "one" {
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
		if _, err := ratelimit.New(s.Client(t), o); !errors.Is(err, ratelimit.ErrInvalidOption) {
			t.Fatalf("got %v, want ErrInvalidOption", err)
		}
	}
}
