package telemetry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/telemetry"
)

func newLocker(t testing.TB, s *redistest.Server, opts ...lock.Option) *lock.Locker {
	t.Helper()
	c := s.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled = true })
	l, err := lock.New(goredisadapter.New(c), append([]lock.Option{lock.WithPrefix(s.Prefix() + "lock:")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Each outcome of each lock operation lands in its own series, with no
// lock name by default.
func TestLockOutcomesMoveTheirInstrumentsWithTheirAttributes(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	l := newLocker(t, s, lock.WithHook(o.Lock))
	other := newLocker(t, s)
	ctx := context.Background()

	lease, err := l.Acquire(ctx, "job", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = other.Acquire(ctx, "job", time.Minute)
	_, _ = l.Acquire(ctx, "job", time.Minute)
	if err := l.Extend(ctx, lease, time.Minute); err != nil {
		t.Fatal(err)
	}
	if ok, _ := l.Release(ctx, lease); !ok {
		t.Fatal("not released")
	}
	_, _ = l.Release(ctx, lease)
	_, _ = l.ForceRelease(ctx, "job")

	op, out := attribute.Key("lock.operation"), attribute.Key("lock.outcome")
	for _, c := range []struct {
		op, outcome string
		want        int64
	}{
		{"acquire", "acquired", 1}, {"acquire", "held", 1}, {"extend", "ok", 1},
		{"release", "released", 1}, {"release", "not_held", 1}, {"force_release", "not_held", 1},
	} {
		if got := o.value(t, "lock.operation.duration", op.String(c.op), out.String(c.outcome)); got != c.want {
			t.Errorf("lock.operation.duration{%s %s} count %d, want %d", c.op, c.outcome, got, c.want)
		}
	}
	for _, name := range []string{"lock.operation.duration", "lock.hold.duration"} {
		for _, p := range o.points(t, name) {
			if _, ok := p.attrs.Value(attribute.Key("lock.name")); ok {
				t.Errorf("%s carries lock.name without WithLockNames: %v", name, p.attrs)
			}
		}
	}
	if got := o.value(t, "lock.hold.duration", out.String("released")); got != 1 {
		t.Errorf("lock.hold.duration{released} count %d, want 1", got)
	}
	held := o.spanNamed("lock.acquire")
	if len(held) != 2 {
		t.Fatalf("%d lock.acquire spans, want 2", len(held))
	}
	if v, _ := attr(held[0], attribute.Key("lock.token")); v.AsInt64() != lease.Token {
		t.Errorf("acquire span token %v, want %d", v, lease.Token)
	}
	if v, _ := attr(held[1], attribute.Key("lock.holder.token")); v.AsInt64() != lease.Token {
		t.Errorf("refused acquire span holder token %v, want %d", v, lease.Token)
	}
}

// A lock deleted under its holder: lock.lost counts it by cause, and the
// hold time is recorded under the release that found it gone.
func TestLeaseLostIsCountedByItsCause(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	l := newLocker(t, s, lock.WithHook(o.Lock))
	err := l.WithLock(context.Background(), "job", 300*time.Millisecond, func(ctx context.Context, _ *lock.Lease) error {
		_, _ = newLocker(t, s).ForceRelease(ctx, "job")
		<-ctx.Done()
		return nil
	})
	if !errors.Is(err, lock.ErrLeaseLost) {
		t.Fatal(err)
	}
	if got := o.value(t, "lock.lost", attribute.Key("lock.lost.cause").String("not_held")); got != 1 {
		t.Errorf("lock.lost{not_held} = %d, want 1", got)
	}
	if got := o.value(t, "lock.hold.duration", attribute.Key("lock.outcome").String("not_held")); got != 1 {
		t.Errorf("lock.hold.duration{not_held} count %d, want 1", got)
	}
}

// A failed call is an error series and a span with status Error.
func TestLockErrorIsCountedAndItsSpanMarkedError(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	c := s.Client(t)
	l, err := lock.New(goredisadapter.New(c), lock.WithPrefix(s.Prefix()), lock.WithHook(o.Lock))
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	if _, err := l.Acquire(context.Background(), "job", time.Second); err == nil {
		t.Fatal("acquire on a closed client succeeded")
	}
	if got := o.value(t, "lock.operation.duration", attribute.Key("lock.operation").String("acquire"), attribute.Key("lock.outcome").String("error")); got != 1 {
		t.Errorf("error count %d, want 1", got)
	}
	sp := o.spanNamed("lock.acquire")
	if len(sp) != 1 || sp[0].Status.Code != codes.Error || len(sp[0].Events) != 1 {
		t.Fatalf("spans %+v, want one with status Error and the error recorded", sp)
	}
}

// The span of a call is a child of the caller's, and spans the call: it
// starts before and ends after the moments the caller saw around it.
func TestSpanNestsUnderTheCallersSpanAndCoversTheCall(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	l := newLocker(t, s, lock.WithHook(o.Lock))
	ctx, parent := o.tp.Tracer("test").Start(context.Background(), "handler")
	before := time.Now()
	lease, err := l.Acquire(ctx, "job", time.Minute)
	after := time.Now()
	parent.End()
	if err != nil {
		t.Fatal(err)
	}
	_, _ = l.Release(context.Background(), lease)
	sp := o.spanNamed("lock.acquire")
	if len(sp) != 1 {
		t.Fatalf("%d acquire spans", len(sp))
	}
	if sp[0].Parent.SpanID() != parent.SpanContext().SpanID() || sp[0].SpanContext.TraceID() != parent.SpanContext().TraceID() {
		t.Fatalf("acquire span's parent %v, want the handler's %v", sp[0].Parent.SpanID(), parent.SpanContext().SpanID())
	}
	if sp[0].StartTime.Before(before) || sp[0].EndTime.After(after) || !sp[0].StartTime.Before(sp[0].EndTime) {
		t.Fatalf("span %v..%v outside the call %v..%v", sp[0].StartTime, sp[0].EndTime, before, after)
	}
	if rel := o.spanNamed("lock.release"); len(rel) != 1 || rel[0].Parent.IsValid() {
		t.Fatalf("release spans %+v, want one root span (no parent in its context)", rel)
	}
}

// Lock names are attributes only WithLockNames.
func TestLockNameIsAnAttributeOnlyWhenAskedFor(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t, telemetry.WithLockNames())
	l := newLocker(t, s, lock.WithHook(o.Lock))
	lease, err := l.Acquire(context.Background(), "job", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = l.Release(context.Background(), lease)
	if got := o.value(t, "lock.operation.duration", attribute.Key("lock.operation").String("acquire"),
		attribute.Key("lock.outcome").String("acquired"), attribute.Key("lock.name").String("job")); got != 1 {
		t.Errorf("acquire{lock.name=job} count %d, want 1", got)
	}
}

// AcquireWait is one wait series, besides its acquire attempts.
func TestAcquireWaitIsRecordedAsOneWait(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	l := newLocker(t, s, lock.WithHook(o.Lock))
	holder := newLocker(t, s)
	if _, err := holder.Acquire(context.Background(), "job", 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AcquireWait(context.Background(), "job", time.Second); err != nil {
		t.Fatal(err)
	}
	pts := o.points(t, "lock.wait.duration")
	if len(pts) != 1 || pts[0].value != 1 || pts[0].sum <= 0 {
		t.Fatalf("lock.wait.duration %+v, want one wait", pts)
	}
	if got := o.value(t, "lock.operation.duration", attribute.Key("lock.operation").String("acquire"), attribute.Key("lock.outcome").String("held")); got < 1 {
		t.Fatalf("no refused acquire recorded before the wait's")
	}
}
