package telemetry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
	"github.com/redis-primitives/go/telemetry"
)

func newIssuer(t testing.TB, s *redistest.Server, opts ...semaphore.Option) *semaphore.Issuer {
	t.Helper()
	i, err := semaphore.New(goredisadapter.New(s.Client(t)), append([]semaphore.Option{semaphore.WithPrefix(s.Prefix() + "semaphore:")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// Each outcome of each semaphore operation lands in its own series, with
// no semaphore name by default; a full semaphore is a refusal, whose span
// says how many held it and carries no error.
func TestSemaphoreOutcomesMoveTheirInstrumentsWithTheirAttributes(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	i := newIssuer(t, s, semaphore.WithHook(o.Semaphore))
	ctx := context.Background()

	p, err := i.Acquire(ctx, "pool", 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := i.Acquire(ctx, "pool", 1, time.Minute); !errors.Is(err, semaphore.ErrFull) {
		t.Fatalf("second acquire of a semaphore of 1: %v, want ErrFull", err)
	}
	if err := i.Extend(ctx, p, time.Minute); err != nil {
		t.Fatal(err)
	}
	if ok, err := i.Release(ctx, p); !ok || err != nil {
		t.Fatalf("release: %v, %v", ok, err)
	}
	if ok, _ := i.Release(ctx, p); ok {
		t.Fatal("released twice")
	}
	w, err := i.AcquireWait(ctx, "pool", 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}

	op, out := attribute.Key("semaphore.operation"), attribute.Key("semaphore.outcome")
	for _, c := range []struct {
		op, outcome string
		want        int64
	}{
		{"acquire", "acquired", 2}, {"acquire", "full", 1}, {"extend", "ok", 1},
		{"release", "released", 1}, {"release", "not_held", 1},
	} {
		if got := o.value(t, "semaphore.operation.duration", op.String(c.op), out.String(c.outcome)); got != c.want {
			t.Errorf("semaphore.operation.duration{%s %s} count %d, want %d", c.op, c.outcome, got, c.want)
		}
	}
	if got := o.value(t, "semaphore.wait.duration", out.String("acquired")); got != 1 {
		t.Errorf("semaphore.wait.duration{acquired} count %d, want 1", got)
	}
	for _, c := range []struct {
		outcome string
		want    int64
	}{{"released", 1}, {"not_held", 1}} {
		if got := o.value(t, "semaphore.hold.duration", out.String(c.outcome)); got != c.want {
			t.Errorf("semaphore.hold.duration{%s} count %d, want %d", c.outcome, got, c.want)
		}
	}
	for _, name := range []string{"semaphore.operation.duration", "semaphore.wait.duration", "semaphore.hold.duration"} {
		for _, pt := range o.points(t, name) {
			if _, ok := pt.attrs.Value(attribute.Key("semaphore.name")); ok {
				t.Errorf("%s carries semaphore.name without WithSemaphoreNames: %v", name, pt.attrs)
			}
		}
	}

	acq := o.spanNamed("semaphore.acquire")
	if len(acq) != 3 {
		t.Fatalf("%d semaphore.acquire spans, want 3 (acquired, full, AcquireWait's)", len(acq))
	}
	if v, _ := attr(acq[0], attribute.Key("semaphore.token")); v.AsInt64() != p.Token || acq[0].Status.Code == codes.Error {
		t.Errorf("acquire span: token %v (want %d), status %v", v, p.Token, acq[0].Status)
	}
	if v, ok := attr(acq[1], attribute.Key("semaphore.holders")); !ok || v.AsInt64() != 1 || acq[1].Status.Code == codes.Error || len(acq[1].Events) != 0 {
		t.Errorf("full acquire span: holders %v, status %v, events %v; want 1 holder and no error", v, acq[1].Status, acq[1].Events)
	}
	if sp := o.spanNamed("semaphore.wait"); len(sp) != 1 {
		t.Errorf("%d semaphore.wait spans, want 1", len(sp))
	} else if v, _ := attr(sp[0], attribute.Key("semaphore.token")); v.AsInt64() != w.Token {
		t.Errorf("wait span token %v, want %d", v, w.Token)
	}
	if sp := o.spanNamed("semaphore.extend"); len(sp) != 1 {
		t.Errorf("%d semaphore.extend spans, want 1", len(sp))
	}
	if sp := o.spanNamed("semaphore.release"); len(sp) != 2 {
		t.Errorf("%d semaphore.release spans, want 2", len(sp))
	}
	_, _ = i.Release(ctx, w)
}

// A permit released under its holder (here by another Issuer, as an
// operator or a failover would lose it): semaphore.lost counts it by its
// cause, and the release that found it gone is a not_held hold.
func TestSemaphorePermitLostIsCountedByItsCause(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	i := newIssuer(t, s, semaphore.WithHook(o.Semaphore))
	other := newIssuer(t, s)
	err := i.WithPermit(context.Background(), "job", 1, 300*time.Millisecond, func(ctx context.Context, p *semaphore.Permit) error {
		if ok, err := other.Release(ctx, p); !ok || err != nil {
			t.Errorf("release under the holder: %v, %v", ok, err)
		}
		<-ctx.Done()
		return nil
	})
	if !errors.Is(err, semaphore.ErrPermitLost) {
		t.Fatalf("WithPermit: %v, want ErrPermitLost", err)
	}
	if got := o.value(t, "semaphore.lost", attribute.Key("semaphore.lost.cause").String("not_held")); got != 1 {
		t.Errorf("semaphore.lost{not_held} = %d, want 1", got)
	}
	if got := o.value(t, "semaphore.operation.duration", attribute.Key("semaphore.operation").String("extend"), attribute.Key("semaphore.outcome").String("not_held")); got < 1 {
		t.Errorf("no not_held renewal recorded before the loss")
	}
}

// Semaphore names are attributes only WithSemaphoreNames; a failed call is
// an error series and a span with status Error.
func TestSemaphoreNameIsAnAttributeOnlyWhenAskedForAndErrorsMarkTheSpan(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t, telemetry.WithSemaphoreNames())
	c := s.Client(t)
	i, err := semaphore.New(goredisadapter.New(c), semaphore.WithPrefix(s.Prefix()+"semaphore:"), semaphore.WithHook(o.Semaphore))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := i.Acquire(ctx, "pool", 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.value(t, "semaphore.operation.duration", attribute.Key("semaphore.operation").String("acquire"),
		attribute.Key("semaphore.outcome").String("acquired"), attribute.Key("semaphore.name").String("pool")); got != 1 {
		t.Errorf("acquire{semaphore.name=pool} count %d, want 1", got)
	}
	if ok, err := i.Release(ctx, p); !ok || err != nil {
		t.Fatal(ok, err)
	}
	_ = c.Close()
	if _, err := i.Acquire(ctx, "pool", 2, time.Minute); err == nil {
		t.Fatal("acquire on a closed client succeeded")
	}
	if got := o.value(t, "semaphore.operation.duration", attribute.Key("semaphore.operation").String("acquire"),
		attribute.Key("semaphore.outcome").String("error"), attribute.Key("semaphore.name").String("pool")); got != 1 {
		t.Errorf("acquire{error} count %d, want 1", got)
	}
	sp := o.spanNamed("semaphore.acquire")
	if len(sp) != 2 || sp[1].Status.Code != codes.Error || len(sp[1].Events) != 1 {
		t.Fatalf("spans %+v, want the second with status Error and the error recorded", sp)
	}
}
