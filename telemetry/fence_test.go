package telemetry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/telemetry"
)

// The refusal of a stale write, the event that shows fencing at work, is
// counted, and its span carries both tokens.
func TestStaleRedisFenceWriteIsCounted(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	store, err := fence.New(s.Client(t), o.Fence())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := s.Prefix() + "{acct}"
	if err := store.Set(ctx, 5, key, "new holder"); err != nil {
		t.Fatal(err)
	}
	if err := store.Set(ctx, 4, key, "stale holder"); !errors.Is(err, fence.ErrStale) {
		t.Fatal(err)
	}
	st, op := telemetry.AttrFenceStore.String("redis"), telemetry.AttrFenceOperation.String("set")
	if got := o.value(t, "fence.writes", st, op, telemetry.AttrFenceOutcome.String("accepted")); got != 1 {
		t.Errorf("fence.writes{accepted} = %d, want 1", got)
	}
	if got := o.value(t, "fence.writes", st, op, telemetry.AttrFenceOutcome.String("stale")); got != 1 {
		t.Errorf("fence.writes{stale} = %d, want 1", got)
	}
	sp := o.spanNamed("fence.write")
	if len(sp) != 2 {
		t.Fatalf("%d fence.write spans, want 2", len(sp))
	}
	tok, _ := attr(sp[1], telemetry.AttrFenceToken)
	hi, _ := attr(sp[1], telemetry.AttrFenceHighest)
	if tok.AsInt64() != 4 || hi.AsInt64() != 5 {
		t.Errorf("stale span token %v highest %v, want 4 and 5", tok, hi)
	}
}
