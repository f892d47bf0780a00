package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/redis-primitives/go/lock"
)

// Attribute keys of lock spans; the metrics' are built by leases.
const (
	attrLockToken       = attribute.Key("lock.token")        // spans: the lease's fencing token
	attrLockHolderToken = attribute.Key("lock.holder.token") // spans: the holder's token, when held
)

// Lock is the hook (lock.WithHook) that records a Locker's decisions:
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
// A Locker has one hook: to observe with your own as well, call Lock from
// it.
func (t *Telemetry) Lock(ctx context.Context, e lock.Event) {
	t.ready()
	a := t.lock.record(ctx, e.Op, e.Outcome, e.Name, t.cfg.lockNames, e.Latency, e.HeldFor)
	if a == nil {
		return
	}
	var extra [2]attribute.KeyValue
	n := 0
	if e.Token != 0 {
		extra[n] = attrLockToken.Int64(e.Token)
		n++
	}
	if e.Outcome == "held" {
		extra[n] = attrLockHolderToken.Int64(e.Holder.Token)
		n++
	}
	t.span(ctx, a.span, e.Latency, e.Err, a.spanAttrs(extra[:n]...))
}
