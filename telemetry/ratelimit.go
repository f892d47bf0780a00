package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/redis-primitives/go/ratelimit"
)

// Attribute keys of ratelimit metrics and spans.
const (
	AttrRateLimitOperation = attribute.Key("ratelimit.operation")  // ratelimit.Op: allow, take, peek, reserve, commit or cancel (not wait)
	AttrRateLimitOutcome   = attribute.Key("ratelimit.outcome")    // ratelimit.Outcome: allowed, rejected, expired, settled or error
	AttrRateLimitLimit     = attribute.Key("ratelimit.limit.name") // the binding limit's Name
	AttrRateLimitKey       = attribute.Key("ratelimit.key")        // only WithKeys
	AttrRateLimitRemaining = attribute.Key("ratelimit.remaining")  // spans
	AttrRateLimitCached    = attribute.Key("ratelimit.cached")     // true: answered by the deny cache
)

// RateLimit returns the option that reports a Limiter's decisions:
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
// It sets the Limiter's hook (ratelimit.WithHook): one Limiter has one
// hook, and an option given after this one replaces it.
func (t *Telemetry) RateLimit() ratelimit.Option {
	t.ready()
	return ratelimit.WithHook(t.rateLimitEvent)
}

type rateLimitKind struct {
	op            ratelimit.Op
	outcome       ratelimit.Outcome
	limit         string
	named, cached bool
}

func (t *Telemetry) rateLimitEvent(ctx context.Context, e ratelimit.Event) {
	k := rateLimitKind{op: e.Op, outcome: e.Outcome, named: e.Limit != (ratelimit.Limit{}), cached: e.Cached}
	if k.named {
		k.limit = e.Limit.Name()
	}
	build := func() *attrs {
		kvs := make([]attribute.KeyValue, 0, 5)
		if k.op != ratelimit.OpWait {
			kvs = append(kvs, AttrRateLimitOperation.String(string(k.op)))
		}
		kvs = append(kvs, AttrRateLimitOutcome.String(string(k.outcome)))
		if k.named {
			kvs = append(kvs, AttrRateLimitLimit.String(k.limit))
		}
		if k.cached {
			kvs = append(kvs, AttrRateLimitCached.Bool(true))
		}
		if t.cfg.keys {
			kvs = append(kvs, AttrRateLimitKey.String(e.Key))
		}
		return newAttrs("ratelimit."+string(k.op), kvs...)
	}
	var a *attrs
	if t.cfg.keys {
		a = build()
	} else {
		a = t.rlCache.get(k, build)
	}
	switch {
	case e.Op == ratelimit.OpWait:
		t.rlWait.Record(ctx, e.Latency.Seconds(), a.record...)
	case e.Cached:
		t.rlDecisions.Add(ctx, 1, a.add...)
	default:
		t.rlDecisions.Add(ctx, 1, a.add...)
		t.rlDuration.Record(ctx, e.Latency.Seconds(), a.record...)
	}
	var extra []attribute.KeyValue
	if e.Err == nil {
		extra = []attribute.KeyValue{AttrRateLimitRemaining.Int(e.Remaining)}
	}
	t.span(ctx, a.span, e.Latency, e.Err, a.spanAttrs(extra...))
}
