package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
)

// attrHTTPRateOutcome is what the rate-limit middleware did with a
// request: httprate.Outcome (allowed, rejected, failed_open,
// failed_closed or error).
const attrHTTPRateOutcome = attribute.Key("httprate.outcome")

// HTTPRate is the hook (httprate.Config.Hook) that records, for every
// request the middleware does not skip:
//
//   - httprate.requests ({request}): by httprate.outcome, and for allowed
//     and rejected requests by ratelimit.limit.name (the binding limit);
//     failed_open counts the requests served unmetered while the limiter
//     could not decide, failed_closed those refused with 503 for it;
//   - httprate.decision.duration (s): how long the limiter's call took,
//     by the same attributes, for the requests whose call was made (a
//     request whose key or cost function failed is counted, not timed).
//
// With WithKeys they carry ratelimit.key as well. It records no spans:
// the limiter's own (RateLimit, on the Limiter the middleware calls) are
// children of the request's span already.
func (t *Telemetry) HTTPRate(ctx context.Context, e httprate.Event) {
	t.ready()
	k := httpRateKind{outcome: e.Outcome, named: e.Result.Limit != (ratelimit.Limit{})}
	if k.named {
		k.limit = e.Result.Limit.Name()
	}
	build := func() *attrs {
		kvs := make([]attribute.KeyValue, 0, 3)
		kvs = append(kvs, attrHTTPRateOutcome.String(k.outcome))
		if k.named {
			kvs = append(kvs, attrRateLimitLimit.String(k.limit))
		}
		if t.cfg.keys {
			kvs = append(kvs, attrRateLimitKey.String(e.Key))
		}
		return newAttrs("", kvs...)
	}
	var a *attrs
	if t.cfg.keys {
		a = build()
	} else {
		a = t.httpRateCache.get(k, build)
	}
	t.httpRateRequests.Add(ctx, 1, a.add...)
	if e.Latency > 0 {
		t.httpRateDuration.Record(ctx, e.Latency.Seconds(), a.record...)
	}
}

type httpRateKind struct {
	outcome string
	limit   string
	named   bool
}
