package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/redis-primitives/go/lock"
)

// Attribute keys of lock metrics and spans.
const (
	AttrLockOperation   = attribute.Key("lock.operation")    // acquire, extend, release, force_release
	AttrLockOutcome     = attribute.Key("lock.outcome")      // lock.Outcome
	AttrLockName        = attribute.Key("lock.name")         // only WithLockNames
	AttrLockToken       = attribute.Key("lock.token")        // spans: the lease's fencing token
	AttrLockHolderToken = attribute.Key("lock.holder.token") // spans: the holder's token, when held
	AttrLockLostCause   = attribute.Key("lock.lost.cause")   // not_held or deadline
)

// Lock returns the option that reports a Locker's decisions:
//
//   - lock.operation.duration (s): every acquire, extend (Keeper and WithLock
//     renewals included), release and force_release, by lock.operation and
//     lock.outcome; a span per call named "lock.<operation>".
//   - lock.wait.duration (s): each AcquireWait call, by lock.outcome; a span
//     "lock.wait".
//   - lock.hold.duration (s): at each release, how long the lease was held,
//     by lock.outcome (released, or not_held: lost before the release).
//   - lock.lost ({lease}): each lease a Keeper or WithLock gave up, by
//     lock.lost.cause.
//
// It sets the Locker's hook (lock.WithHook): one Locker has one hook, and an
// option given after this one replaces it.
func (t *Telemetry) Lock() lock.Option {
	return lock.WithHook(t.lockEvent)
}

func (t *Telemetry) lockEvent(ctx context.Context, e lock.Event) {
	attrs := make([]attribute.KeyValue, 0, 5)
	if e.Op != lock.OpWait && e.Op != lock.OpLost {
		attrs = append(attrs, AttrLockOperation.String(string(e.Op)))
	}
	if e.Op == lock.OpLost {
		attrs = append(attrs, AttrLockLostCause.String(string(e.Outcome)))
	} else {
		attrs = append(attrs, AttrLockOutcome.String(string(e.Outcome)))
	}
	if t.cfg.lockNames {
		attrs = append(attrs, AttrLockName.String(e.Name))
	}
	set := metric.WithAttributes(attrs...)
	switch e.Op {
	case lock.OpLost:
		t.lockLost.Add(ctx, 1, set)
		return
	case lock.OpWait:
		t.lockWait.Record(ctx, e.Latency.Seconds(), set)
	default:
		t.lockDuration.Record(ctx, e.Latency.Seconds(), set)
	}
	if e.Op == lock.OpRelease {
		t.lockHold.Record(ctx, e.HeldFor.Seconds(), metric.WithAttributes(attrs[1:]...))
	}
	if e.Token != 0 {
		attrs = append(attrs, AttrLockToken.Int64(e.Token))
	}
	if e.Outcome == lock.OutcomeHeld {
		attrs = append(attrs, AttrLockHolderToken.Int64(e.Holder.Token))
	}
	t.span(ctx, "lock."+string(e.Op), e.Latency, e.Err, attrs...)
}
