package telemetry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// The refusal of a stale write, the event that shows fencing at work, is
// counted, and its span carries both tokens.
func TestStaleRedisFenceWriteIsCounted(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	store, err := fence.New(goredisadapter.New(s.Client(t)), fence.WithHook(o.Fence))
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
	st, op := attribute.Key("fence.store").String("redis"), attribute.Key("fence.operation").String("set")
	if got := o.value(t, "fence.writes", st, op, attribute.Key("fence.outcome").String("accepted")); got != 1 {
		t.Errorf("fence.writes{accepted} = %d, want 1", got)
	}
	if got := o.value(t, "fence.writes", st, op, attribute.Key("fence.outcome").String("stale")); got != 1 {
		t.Errorf("fence.writes{stale} = %d, want 1", got)
	}
	sp := o.spanNamed("fence.write")
	if len(sp) != 2 {
		t.Fatalf("%d fence.write spans, want 2", len(sp))
	}
	tok, _ := attr(sp[1], attribute.Key("fence.token"))
	hi, _ := attr(sp[1], attribute.Key("fence.highest"))
	if tok.AsInt64() != 4 || hi.AsInt64() != 5 {
		t.Errorf("stale span token %v highest %v, want 4 and 5", tok, hi)
	}
}

// A fence.write span lasts as long as the write did, and the write's
// latency is in fence.write.duration: spans of zero length, the earlier
// shape, said nothing of a slow store. The write is slowed by the server
// itself (a frozen server thawed after a pause), so the bound is the
// pause, not a guess.
func TestFenceWriteSpanLastsAsLongAsTheWrite(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	o := newOtel(t)
	store, err := fence.New(goredisadapter.New(s.Client(t)), fence.WithHook(o.Fence))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := s.Prefix() + "{slow}"
	if err := store.Set(ctx, 1, key, "warm"); err != nil { // loads the script
		t.Fatal(err)
	}
	const pause = 150 * time.Millisecond
	s.Freeze(t)
	thawed := make(chan struct{})
	go func() {
		defer close(thawed)
		time.Sleep(pause)
		s.Thaw(t)
	}()
	err = store.Set(ctx, 2, key, "slow")
	<-thawed
	if err != nil {
		t.Fatal(err)
	}
	sp := o.spanNamed("fence.write")
	if len(sp) != 2 {
		t.Fatalf("%d fence.write spans, want 2", len(sp))
	}
	d := sp[1].EndTime.Sub(sp[1].StartTime)
	t.Logf("a write held up %v by a frozen server: span %v", pause, d)
	if d < pause/2 {
		t.Fatalf("span of the slowed write lasted %v, want about %v", d, pause)
	}
	st, op := attribute.Key("fence.store").String("redis"), attribute.Key("fence.operation").String("set")
	var sum float64
	var n int64
	for _, p := range o.points(t, "fence.write.duration") {
		sum, n = sum+p.sum, n+p.value
	}
	if got := o.value(t, "fence.write.duration", st, op, attribute.Key("fence.outcome").String("accepted")); got != 2 || n != 2 {
		t.Fatalf("fence.write.duration{accepted} count %d (all points %d), want 2", got, n)
	}
	if sum < (pause / 2).Seconds() {
		t.Fatalf("fence.write.duration sums %.3fs, want at least the slowed write's", sum)
	}
}

// A write that fails without a verdict is counted as an error, and its
// span says so: an outage is not silence.
func TestFenceWriteWithoutAVerdictIsCountedAsAnError(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	store, err := fence.New(goredisadapter.New(s.Client(t)), fence.WithHook(o.Fence))
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.Eval(context.Background(), 3, "error('boom')", []string{s.Prefix() + "{e}"})
	if err == nil {
		t.Fatal("an Eval whose script raises: no error")
	}
	st, op := attribute.Key("fence.store").String("redis"), attribute.Key("fence.operation").String("eval")
	if got := o.value(t, "fence.writes", st, op, attribute.Key("fence.outcome").String("error")); got != 1 {
		t.Errorf("fence.writes{error} = %d, want 1", got)
	}
	sp := o.spanNamed("fence.write")
	if len(sp) != 1 || sp[0].Status.Code != codes.Error {
		t.Fatalf("spans %+v, want one with status Error", sp)
	}
}
