package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/redis-primitives/go/ratelimit"
)

// Attribute keys of ratelimit metrics and spans.
const (
	AttrRateLimitOperation = attribute.Key("ratelimit.operation")  // allow, take or peek
	AttrRateLimitOutcome   = attribute.Key("ratelimit.outcome")    // allowed, rejected or error
	AttrRateLimitLimit     = attribute.Key("ratelimit.limit.name") // the binding limit's Name
	AttrRateLimitKey       = attribute.Key("ratelimit.key")        // only WithKeys
	AttrRateLimitRemaining = attribute.Key("ratelimit.remaining")  // spans
)

// RateLimit returns the option that reports a Limiter's decisions:
// ratelimit.decisions ({decision}) and ratelimit.decision.duration (s), by
// ratelimit.operation, ratelimit.outcome and ratelimit.limit.name (the
// binding limit: name your limits with Limit.Named), and a span per call
// named "ratelimit.<operation>".
//
// It sets the Limiter's hook (ratelimit.WithHook): one Limiter has one
// hook, and an option given after this one replaces it.
func (t *Telemetry) RateLimit() ratelimit.Option {
	return ratelimit.WithHook(t.rateLimitDecision)
}

func (t *Telemetry) rateLimitDecision(ctx context.Context, d ratelimit.Decision) {
	outcome := "allowed"
	switch {
	case d.Err != nil:
		outcome = "error"
	case !d.Allowed:
		outcome = "rejected"
	}
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, AttrRateLimitOperation.String(d.Op), AttrRateLimitOutcome.String(outcome))
	if d.Limit != (ratelimit.Limit{}) {
		attrs = append(attrs, AttrRateLimitLimit.String(d.Limit.Name()))
	}
	if t.cfg.keys {
		attrs = append(attrs, AttrRateLimitKey.String(d.Key))
	}
	set := metric.WithAttributes(attrs...)
	t.rlDecisions.Add(ctx, 1, set)
	t.rlDuration.Record(ctx, d.Latency.Seconds(), set)
	if d.Err == nil {
		attrs = append(attrs, AttrRateLimitRemaining.Int(d.Remaining))
	}
	t.span(ctx, "ratelimit."+d.Op, d.Latency, d.Err, attrs...)
}
