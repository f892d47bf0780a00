package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/redis-primitives/go/semaphore"
)

// Attribute keys of semaphore metrics and spans.
const (
	AttrSemaphoreOperation = attribute.Key("semaphore.operation")  // acquire, extend, release
	AttrSemaphoreOutcome   = attribute.Key("semaphore.outcome")    // semaphore.Outcome
	AttrSemaphoreName      = attribute.Key("semaphore.name")       // only WithSemaphoreNames
	AttrSemaphoreToken     = attribute.Key("semaphore.token")      // spans: the permit's fencing token
	AttrSemaphoreHolders   = attribute.Key("semaphore.holders")    // spans: the live permits, when full
	AttrSemaphoreLostCause = attribute.Key("semaphore.lost.cause") // not_held or deadline
)

// Semaphore returns the option that reports an Issuer's decisions, as Lock
// does a Locker's:
//
//   - semaphore.operation.duration (s): every acquire (AcquireWait's and
//     WithPermit's attempts included), extend (WithPermit's renewals
//     included) and release, by semaphore.operation and semaphore.outcome
//     (acquired, full, ok, not_held, released, error); a span per call
//     named "semaphore.<operation>";
//   - semaphore.wait.duration (s): each AcquireWait call, by
//     semaphore.outcome; a span "semaphore.wait";
//   - semaphore.hold.duration (s): at each release, how long the permit was
//     held, by semaphore.outcome (released, or not_held: gone before the
//     release);
//   - semaphore.lost ({permit}): each permit WithPermit or a Keeper gave up
//     while held, by semaphore.lost.cause.
//
// A full semaphore is a refusal, not a failure: its span carries
// semaphore.holders and no error. It sets the Issuer's hook
// (semaphore.WithHook): one Issuer has one hook, and an option given after
// this one replaces it.
func (t *Telemetry) Semaphore() semaphore.Option {
	t.ready()
	return semaphore.WithHook(t.semaphoreEvent)
}

type semaphoreKind struct {
	op      semaphore.Op
	outcome semaphore.Outcome
}

// semaphoreAttrs builds what an event of e's kind records with.
func (t *Telemetry) semaphoreAttrs(e semaphore.Event) *attrs {
	kvs := make([]attribute.KeyValue, 0, 3)
	if e.Op != semaphore.OpWait && e.Op != semaphore.OpLost {
		kvs = append(kvs, AttrSemaphoreOperation.String(string(e.Op)))
	}
	if e.Op == semaphore.OpLost {
		kvs = append(kvs, AttrSemaphoreLostCause.String(string(e.Outcome)))
	} else {
		kvs = append(kvs, AttrSemaphoreOutcome.String(string(e.Outcome)))
	}
	if t.cfg.semaphoreNames {
		kvs = append(kvs, AttrSemaphoreName.String(e.Name))
	}
	a := newAttrs("semaphore."+string(e.Op), kvs...)
	if e.Op == semaphore.OpRelease {
		a.hold = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kvs[1:]...))}
	}
	return a
}

func (t *Telemetry) semaphoreEvent(ctx context.Context, e semaphore.Event) {
	var a *attrs
	if t.cfg.semaphoreNames {
		a = t.semaphoreAttrs(e)
	} else {
		a = t.semaphoreCache.get(semaphoreKind{e.Op, e.Outcome}, func() *attrs { return t.semaphoreAttrs(e) })
	}
	switch e.Op {
	case semaphore.OpLost:
		t.semaphoreLost.Add(ctx, 1, a.add...)
		return
	case semaphore.OpWait:
		t.semaphoreWait.Record(ctx, e.Latency.Seconds(), a.record...)
	default:
		t.semaphoreDuration.Record(ctx, e.Latency.Seconds(), a.record...)
	}
	if e.Op == semaphore.OpRelease {
		t.semaphoreHold.Record(ctx, e.HeldFor.Seconds(), a.hold...)
	}
	var extra [1]attribute.KeyValue
	n := 0
	err := e.Err
	switch {
	case e.Outcome == semaphore.OutcomeFull:
		extra[n], err = AttrSemaphoreHolders.Int(e.Holders), nil
		n++
	case e.Token != 0:
		extra[n] = AttrSemaphoreToken.Int64(e.Token)
		n++
	}
	t.span(ctx, a.span, e.Latency, err, a.spanAttrs(extra[:n]...))
}
