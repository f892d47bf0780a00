package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// leases are the instruments of a primitive that hands out leases (lock's
// leases, semaphore's permits): the same metrics under its prefix, by the
// same attributes (<prefix>.operation, .outcome, .lost.cause and, when
// asked for, .name).
type leases struct {
	prefix               string // "lock" or "semaphore"
	duration, wait, hold metric.Float64Histogram
	lost                 metric.Int64Counter
	cache                cache[leaseKind]
}

type leaseKind struct{ op, outcome string }

// record records an event of a lease primitive in its metrics, and returns
// what its span records with; nil for "lost", which has no span.
func (l *leases) record(ctx context.Context, op, outcome, name string, withName bool, latency, heldFor time.Duration) *attrs {
	var a *attrs
	if withName {
		a = l.attrs(op, outcome, name, true)
	} else {
		a = l.cache.get(leaseKind{op, outcome}, func() *attrs { return l.attrs(op, outcome, "", false) })
	}
	switch op {
	case "lost":
		l.lost.Add(ctx, 1, a.add...)
		return nil
	case "wait":
		l.wait.Record(ctx, latency.Seconds(), a.record...)
	default:
		l.duration.Record(ctx, latency.Seconds(), a.record...)
	}
	if op == "release" {
		l.hold.Record(ctx, heldFor.Seconds(), a.hold...)
	}
	return a
}

// attrs builds what an event of op and outcome records with.
func (l *leases) attrs(op, outcome, name string, withName bool) *attrs {
	kvs := make([]attribute.KeyValue, 0, 3)
	if op != "wait" && op != "lost" {
		kvs = append(kvs, attribute.String(l.prefix+".operation", op))
	}
	if op == "lost" {
		kvs = append(kvs, attribute.String(l.prefix+".lost.cause", outcome))
	} else {
		kvs = append(kvs, attribute.String(l.prefix+".outcome", outcome))
	}
	if withName {
		kvs = append(kvs, attribute.String(l.prefix+".name", name))
	}
	a := newAttrs(l.prefix+"."+op, kvs...)
	if op == "release" {
		a.hold = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kvs[1:]...))}
	}
	return a
}
