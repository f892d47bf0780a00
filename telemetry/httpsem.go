package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/redis-primitives/go/semaphore/httpsem"
)

// attrHTTPSemOutcome is what the concurrency-limit middleware did with a
// request: httpsem.Outcome (admitted, full, failed_open, failed_closed or
// error).
const attrHTTPSemOutcome = attribute.Key("httpsem.outcome")

// HTTPSem is the hook (httpsem.Config.Hook) that records, for every
// request the middleware does not skip:
//
//   - httpsem.requests ({request}): by httpsem.outcome; failed_open counts
//     the requests served without a permit while Redis could not decide,
//     failed_closed those refused with 503 for it, full those refused with
//     429 because Capacity were in flight;
//   - httpsem.acquire.duration (s): how long the acquire took, by the same
//     attribute, for the requests whose acquire was made (a request whose
//     Key function failed is counted, not timed).
//
// With WithSemaphoreNames they carry semaphore.name as well: the request's
// key, the name of the semaphore it counted against. It records no spans:
// the Issuer's own (semaphore.acquire, with Semaphore on the Issuer the
// middleware calls) are children of the request's span already.
func (t *Telemetry) HTTPSem(ctx context.Context, e httpsem.Event) {
	t.ready()
	build := func() *attrs {
		kvs := make([]attribute.KeyValue, 0, 2)
		kvs = append(kvs, attrHTTPSemOutcome.String(e.Outcome))
		if t.cfg.semaphoreNames {
			kvs = append(kvs, attrSemaphoreName.String(e.Key))
		}
		return newAttrs("", kvs...)
	}
	var a *attrs
	if t.cfg.semaphoreNames {
		a = build()
	} else {
		a = t.httpSemCache.get(e.Outcome, build)
	}
	t.httpSemRequests.Add(ctx, 1, a.add...)
	if e.Latency > 0 {
		t.httpSemDuration.Record(ctx, e.Latency.Seconds(), a.record...)
	}
}
