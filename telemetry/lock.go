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
	t.ready()
	return lock.WithHook(t.lockEvent)
}

type lockKind struct {
	op      lock.Op
	outcome lock.Outcome
}

// lockAttrs builds what an event of e's kind records with.
func (t *Telemetry) lockAttrs(e lock.Event) *attrs {
	kvs := make([]attribute.KeyValue, 0, 3)
	if e.Op != lock.OpWait && e.Op != lock.OpLost {
		kvs = append(kvs, AttrLockOperation.String(string(e.Op)))
	}
	if e.Op == lock.OpLost {
		kvs = append(kvs, AttrLockLostCause.String(string(e.Outcome)))
	} else {
		kvs = append(kvs, AttrLockOutcome.String(string(e.Outcome)))
	}
	if t.cfg.lockNames {
		kvs = append(kvs, AttrLockName.String(e.Name))
	}
	a := newAttrs("lock."+string(e.Op), kvs...)
	if e.Op == lock.OpRelease {
		a.hold = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kvs[1:]...))}
	}
	return a
}

func (t *Telemetry) lockEvent(ctx context.Context, e lock.Event) {
	var a *attrs
	if t.cfg.lockNames {
		a = t.lockAttrs(e)
	} else {
		a = t.lockCache.get(lockKind{e.Op, e.Outcome}, func() *attrs { return t.lockAttrs(e) })
	}
	switch e.Op {
	case lock.OpLost:
		t.lockLost.Add(ctx, 1, a.add...)
		return
	case lock.OpWait:
		t.lockWait.Record(ctx, e.Latency.Seconds(), a.record...)
	default:
		t.lockDuration.Record(ctx, e.Latency.Seconds(), a.record...)
	}
	if e.Op == lock.OpRelease {
		t.lockHold.Record(ctx, e.HeldFor.Seconds(), a.hold...)
	}
	var extra [2]attribute.KeyValue
	n := 0
	if e.Token != 0 {
		extra[n] = AttrLockToken.Int64(e.Token)
		n++
	}
	if e.Outcome == lock.OutcomeHeld {
		extra[n] = AttrLockHolderToken.Int64(e.Holder.Token)
		n++
	}
	t.span(ctx, a.span, e.Latency, e.Err, a.spanAttrs(extra[:n]...))
}
