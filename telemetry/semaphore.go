package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/redis-primitives/go/semaphore"
)

// Attribute keys of semaphore spans, and semaphore.name (httpsem's metrics
// too); the Issuer's metrics' keys are built by leases.
const (
	attrSemaphoreName    = attribute.Key("semaphore.name")    // only WithSemaphoreNames
	attrSemaphoreToken   = attribute.Key("semaphore.token")   // spans: the permit's fencing token
	attrSemaphoreHolders = attribute.Key("semaphore.holders") // spans: the live permits, when full
)

// Semaphore is the hook (semaphore.WithHook) that records an Issuer's
// decisions, as Lock does a Locker's:
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
// semaphore.holders and no error. An Issuer has one hook: to observe with
// your own as well, call Semaphore from it.
func (t *Telemetry) Semaphore(ctx context.Context, e semaphore.Event) {
	t.ready()
	a := t.semaphore.record(ctx, e.Op, e.Outcome, e.Name, t.cfg.semaphoreNames, e.Latency, e.HeldFor)
	if a == nil {
		return
	}
	var extra [1]attribute.KeyValue
	n := 0
	err := e.Err
	switch {
	case e.Outcome == "full":
		extra[n], err = attrSemaphoreHolders.Int(e.Holders), nil
		n++
	case e.Token != 0:
		extra[n] = attrSemaphoreToken.Int64(e.Token)
		n++
	}
	t.span(ctx, a.span, e.Latency, err, a.spanAttrs(extra[:n]...))
}
