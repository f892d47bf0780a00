package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/redis-primitives/go/ratelimit"
)

// Attribute keys of ratelimit metrics and spans.
const (
	AttrRateLimitOperation = attribute.Key("ratelimit.operation")  // allow, take, peek, reserve, commit or cancel
	AttrRateLimitOutcome   = attribute.Key("ratelimit.outcome")    // allowed, rejected or error
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
// trips only.
//
// It sets the Limiter's hook (ratelimit.WithHook): one Limiter has one
// hook, and an option given after this one replaces it.
func (t *Telemetry) RateLimit() ratelimit.Option {
	return ratelimit.WithHook(t.rateLimitDecision)
}

type rateLimitKind struct {
	op, outcome, limit string
	named, cached      bool
}

func (t *Telemetry) rateLimitDecision(ctx context.Context, d ratelimit.Decision) {
	outcome := "allowed"
	switch {
	case d.Err != nil:
		outcome = "error"
	case !d.Allowed:
		outcome = "rejected"
	}
	k := rateLimitKind{op: d.Op, outcome: outcome, named: d.Limit != (ratelimit.Limit{}), cached: d.Cached}
	if k.named {
		k.limit = d.Limit.Name()
	}
	build := func() *attrs {
		kvs := make([]attribute.KeyValue, 0, 5)
		kvs = append(kvs, AttrRateLimitOperation.String(k.op), AttrRateLimitOutcome.String(k.outcome))
		if k.named {
			kvs = append(kvs, AttrRateLimitLimit.String(k.limit))
		}
		if k.cached {
			kvs = append(kvs, AttrRateLimitCached.Bool(true))
		}
		if t.cfg.keys {
			kvs = append(kvs, AttrRateLimitKey.String(d.Key))
		}
		return newAttrs("ratelimit."+k.op, kvs...)
	}
	var a *attrs
	if t.cfg.keys {
		a = build()
	} else {
		a = t.rlCache.get(k, build)
	}
	t.rlDecisions.Add(ctx, 1, a.add...)
	if !d.Cached {
		t.rlDuration.Record(ctx, d.Latency.Seconds(), a.record...)
	}
	var extra []attribute.KeyValue
	if d.Err == nil {
		extra = []attribute.KeyValue{AttrRateLimitRemaining.Int(d.Remaining)}
	}
	t.span(ctx, a.span, d.Latency, d.Err, a.spanAttrs(extra...))
}
