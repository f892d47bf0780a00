package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/redis-primitives/go/ratelimit"
)

// Attribute keys of ratelimit metrics and spans.
const (
	attrRateLimitOperation = attribute.Key("ratelimit.operation")  // Event.Op: allow, take, peek, reserve, commit, cancel or extend (not wait)
	attrRateLimitOutcome   = attribute.Key("ratelimit.outcome")    // ratelimit.Outcome: allowed, rejected, expired, settled or error
	attrRateLimitLimit     = attribute.Key("ratelimit.limit.name") // the binding limit's Name
	attrRateLimitKey       = attribute.Key("ratelimit.key")        // only WithKeys
	attrRateLimitRemaining = attribute.Key("ratelimit.remaining")  // spans
	attrRateLimitCached    = attribute.Key("ratelimit.cached")     // true: answered by the deny cache
)

// RateLimit is the hook (ratelimit.WithHook) that records a Limiter's
// decisions:
// ratelimit.decisions ({decision}) and ratelimit.decision.duration (s), by
// ratelimit.operation, ratelimit.outcome and ratelimit.limit.name (the
// binding limit: name your limits with Limit.Named), and a span per call
// named "ratelimit.<operation>". An answer from the deny cache
// (ratelimit.WithDenyCache) carries ratelimit.cached=true and is counted
// in ratelimit.decisions but not timed: the duration histogram holds round
// trips only. A Wait or WaitN is its attempts, each a decision of
// operation allow, and the whole call, recorded in ratelimit.wait.duration
// (s) by ratelimit.outcome and ratelimit.limit.name, with a span
// "ratelimit.wait" for the whole call beside its attempts' spans, under the
// same parent; it is not a decision of its own.
//
// A Limiter has one hook: to observe with your own as well, call RateLimit
// from it.
func (t *Telemetry) RateLimit(ctx context.Context, e ratelimit.Event) {
	t.ready()
	k := rateLimitKind{op: e.Op, outcome: e.Outcome, named: e.Limit != (ratelimit.Limit{}), cached: e.Cached}
	if k.named {
		k.limit = e.Limit.Name()
	}
	build := func() *attrs {
		kvs := make([]attribute.KeyValue, 0, 5)
		if k.op != "wait" {
			kvs = append(kvs, attrRateLimitOperation.String(k.op))
		}
		kvs = append(kvs, attrRateLimitOutcome.String(k.outcome))
		if k.named {
			kvs = append(kvs, attrRateLimitLimit.String(k.limit))
		}
		if k.cached {
			kvs = append(kvs, attrRateLimitCached.Bool(true))
		}
		if t.cfg.keys {
			kvs = append(kvs, attrRateLimitKey.String(e.Key))
		}
		return newAttrs("ratelimit."+k.op, kvs...)
	}
	var a *attrs
	if t.cfg.keys {
		a = build()
	} else {
		a = t.rlCache.get(k, build)
	}
	switch {
	case e.Op == "wait":
		t.rlWait.Record(ctx, e.Latency.Seconds(), a.record...)
	case e.Cached:
		t.rlDecisions.Add(ctx, 1, a.add...)
	default:
		t.rlDecisions.Add(ctx, 1, a.add...)
		t.rlDuration.Record(ctx, e.Latency.Seconds(), a.record...)
	}
	var extra []attribute.KeyValue
	if e.Err == nil {
		extra = []attribute.KeyValue{attrRateLimitRemaining.Int(e.Remaining)}
	}
	t.span(ctx, a.span, e.Latency, e.Err, a.spanAttrs(extra...))
}

type rateLimitKind struct {
	op            string
	outcome       string
	limit         string
	named, cached bool
}
