package fence_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
)

// Every verdict reaches the hook, a refusal with its token and highest,
// each with its latency; bad input, which gets no verdict, does not.
func TestHookSeesEveryAcceptedAndRefusedWrite(t *testing.T) {
	var (
		mu  sync.Mutex
		got []fence.Event
	)
	store, _, p := newStore(t, fence.WithHook(func(_ context.Context, e fence.Event) {
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
	}))
	ctx := context.Background()
	key, hash := p+"{k}", p+"{k}:h"
	_ = store.Set(ctx, 5, key, "a")
	_ = store.Set(ctx, 4, key, "b")
	_ = store.HSet(ctx, 3, hash, "f", "v")
	_, _ = store.Eval(ctx, 6, "redis.call('SET', KEYS[2], ARGV[2])", []string{key}, "c")
	_, _ = store.Eval(ctx, 2, "redis.call('SET', KEYS[2], ARGV[2])", []string{key}, "d")
	_ = store.Set(ctx, 0, key, "bad token")
	_ = store.Set(ctx, 1, "", "bad key")
	want := []fence.Event{
		{Op: "set", Outcome: "accepted", Key: key, Token: 5},
		{Op: "set", Outcome: "stale", Key: key, Token: 4, Highest: 5},
		{Op: "hset", Outcome: "accepted", Key: hash, Token: 3}, // its own mark
		{Op: "eval", Outcome: "accepted", Key: key, Token: 6},
		{Op: "eval", Outcome: "stale", Key: key, Token: 2, Highest: 6},
	}
	if len(got) != len(want) {
		t.Fatalf("hook saw %d events, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range got {
		if got[i].Latency <= 0 {
			t.Errorf("event %d: latency %v, want the write's", i, got[i].Latency)
		}
		if stale := got[i].Outcome == "stale"; stale != errors.Is(got[i].Err, fence.ErrStale) {
			t.Errorf("event %d: outcome %s with error %v", i, got[i].Outcome, got[i].Err)
		}
		got[i].Latency, got[i].Err = 0, nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("hook saw\n%+v\nwant\n%+v", got, want)
	}
}

// A write that fails without a verdict is reported too, with its error:
// a hook that saw only verdicts would count an outage as silence.
func TestHookSeesAWriteThatFailedWithoutAVerdict(t *testing.T) {
	var got []fence.Event
	store, _, p := newStore(t, fence.WithHook(func(_ context.Context, e fence.Event) { got = append(got, e) }))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := store.Set(ctx, 1, p+"{k}", "a")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a write with a canceled context: %v", err)
	}
	_, evalErr := store.Eval(context.Background(), 2, "error('boom')", []string{p + "{k}"})
	if evalErr == nil {
		t.Fatal("an Eval whose script raises: no error")
	}
	if len(got) != 2 || got[0].Outcome != "error" || !errors.Is(got[0].Err, context.Canceled) ||
		got[1].Outcome != "error" || got[1].Err == nil {
		t.Fatalf("hook saw %+v; want two error events with their errors", got)
	}
}

// WithLogger logs refusals only; without it nothing is logged, not even
// to slog's default logger.
func TestLoggerRecordsOnlyRefusedStaleWritesAndNothingByDefault(t *testing.T) {
	var def bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(old) })

	var buf bytes.Buffer
	logged, _, p := newStore(t, fence.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))))
	silent, _, q := newStore(t)
	ctx := context.Background()
	for _, st := range []struct {
		s *fence.Store
		k string
	}{{logged, p + "{k}"}, {silent, q + "{k}"}} {
		_ = st.s.Set(ctx, 5, st.k, "a")
		_ = st.s.Set(ctx, 5, st.k, "again")
		if err := st.s.Set(ctx, 4, st.k, "b"); !errors.Is(err, fence.ErrStale) {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("logged %d lines, want 1 (the refusal):\n%s", len(lines), buf.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["level"] != "WARN" || rec["key"] != p+"{k}" || rec["token"] != 4.0 || rec["highest"] != 5.0 || rec["op"] != "set" {
		t.Fatalf("log record %v", rec)
	}
	if def.Len() != 0 {
		t.Fatalf("logged to slog's default logger without WithLogger:\n%s", def.String())
	}
}

func TestNilHookOrLoggerIsAnInvalidOption(t *testing.T) {
	_, c, _ := newStore(t)
	client := goredisadapter.New(c)
	if _, err := fence.New(client, fence.WithHook(nil)); !errors.Is(err, fence.ErrInvalidOption) {
		t.Errorf("WithHook(nil): %v", err)
	}
	if _, err := fence.New(client, fence.WithLogger(nil)); !errors.Is(err, fence.ErrInvalidOption) {
		t.Errorf("WithLogger(nil): %v", err)
	}
}
