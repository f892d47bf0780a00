package pgfence_test

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

	"github.com/jackc/pgx/v5"

	"github.com/redis-primitives/go/fence/pgfence"
)

// Every verdict of every tool, through both doors, reaches the hook, and
// so does a missing row, as an error: a call with no verdict is not silence.
func TestHookSeesEveryAcceptedAndRefusedWrite(t *testing.T) {
	pool, _ := newDB(t, 0)
	db := openSQL(t, pool)
	ctx := context.Background()
	var (
		mu  sync.Mutex
		got []pgfence.Event
	)
	store, err := pgfence.New(pgfence.WithHook(func(_ context.Context, e pgfence.Event) {
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	table := accountTable(t, pool, store)
	if err := store.Insert(ctx, pool, "acct", "v", 5); err != nil {
		t.Fatal(err)
	}
	guard := func(token int64) error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return store.Guard(ctx, tx, "job", token) })
	}
	guardSQL := func(token int64) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := store.GuardSQL(ctx, tx, "job", token); err != nil {
			return err
		}
		return tx.Commit()
	}
	_ = store.Update(ctx, pool, "acct", "v6", 6)
	_ = store.Update(ctx, pool, "acct", "v4", 4)
	_ = store.Update(ctx, pool, "none", "v", 9) // no such row: an error, no verdict
	_ = table.Update(ctx, pool, "acct", 3, map[string]any{"value": "t3"})
	_ = table.UpdateSQL(ctx, db, "acct", 0+1, map[string]any{"value": "t1"})
	_ = guard(7)
	_ = guardSQL(2)
	rows, acct, marks := `"pgfence_rows"`, `"account"`, `"pgfence_marks"`
	want := []pgfence.Event{
		{Op: "update", Outcome: "accepted", Table: rows, ID: "acct", Token: 6},
		{Op: "update", Outcome: "stale", Table: rows, ID: "acct", Token: 4, Highest: 6},
		{Op: "update", Outcome: "error", Table: rows, ID: "none", Token: 9},
		{Op: "update", Outcome: "accepted", Table: acct, ID: "acct", Token: 3},
		{Op: "update", Outcome: "stale", Table: acct, ID: "acct", Token: 1, Highest: 3},
		{Op: "guard", Outcome: "accepted", Table: marks, ID: "job", Token: 7},
		{Op: "guard", Outcome: "stale", Table: marks, ID: "job", Token: 2, Highest: 7},
	}
	if len(got) != len(want) {
		t.Fatalf("hook saw %d events, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range got {
		if got[i].Latency <= 0 {
			t.Errorf("event %d: latency %v, want the call's", i, got[i].Latency)
		}
		switch got[i].Outcome {
		case "stale":
			if !errors.Is(got[i].Err, pgfence.ErrStale) {
				t.Errorf("event %d: stale with error %v", i, got[i].Err)
			}
		case "error":
			if !errors.Is(got[i].Err, pgfence.ErrNotFound) {
				t.Errorf("event %d: error %v, want ErrNotFound", i, got[i].Err)
			}
		}
		got[i].Latency, got[i].Err = 0, nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("hook saw\n%+v\nwant\n%+v", got, want)
	}
}

// WithLogger logs refusals only; without it nothing is logged, not even
// to slog's default logger.
func TestLoggerRecordsOnlyRefusedStaleWritesAndNothingByDefault(t *testing.T) {
	var def bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(old) })

	pool, silent := newDB(t, 0)
	ctx := context.Background()
	var buf bytes.Buffer
	logged, err := pgfence.New(pgfence.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := silent.Insert(ctx, pool, "acct", "v", 5); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*pgfence.Store{logged, silent} {
		if err := st.Update(ctx, pool, "acct", "v", 5); err != nil {
			t.Fatal(err)
		}
		if err := st.Update(ctx, pool, "acct", "v", 4); !errors.Is(err, pgfence.ErrStale) {
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
	if rec["level"] != "WARN" || rec["id"] != "acct" || rec["token"] != 4.0 || rec["highest"] != 5.0 || rec["op"] != "update" {
		t.Fatalf("log record %v", rec)
	}
	if def.Len() != 0 {
		t.Fatalf("logged to slog's default logger without WithLogger:\n%s", def.String())
	}
}

func TestNilHookOrLoggerIsAnInvalidOption(t *testing.T) {
	if _, err := pgfence.New(pgfence.WithHook(nil)); !errors.Is(err, pgfence.ErrInvalidOption) {
		t.Errorf("WithHook(nil): %v", err)
	}
	if _, err := pgfence.New(pgfence.WithLogger(nil)); !errors.Is(err, pgfence.ErrInvalidOption) {
		t.Errorf("WithLogger(nil): %v", err)
	}
}
