// Package pgfencetel reports pgfence's verdicts through a
// telemetry.Telemetry. It is a package of its own so that importing
// package telemetry does not pull in pgfence's PostgreSQL driver.
package pgfencetel

import (
	"context"

	"github.com/redis-primitives/go/fence/pgfence"
	"github.com/redis-primitives/go/telemetry"
)

// Hook returns the hook (pgfence.WithHook) that records every verdict of a
// pgfence Store through t, as t.Fence does a fence.Store's: fence.writes
// and fence.write.duration with fence.store "postgresql", fence.operation
// (update or guard), fence.outcome (accepted, stale or error) and
// fence.table (the row id as fence.key only with telemetry.WithKeys), and
// a "fence.write" span with the tokens. It is a function of this package,
// not a method of Telemetry, only so that package telemetry does not
// import pgfence's PostgreSQL driver. A nil t is taken for a zero
// Telemetry, which records to otel's global providers.
func Hook(t *telemetry.Telemetry) func(ctx context.Context, e pgfence.Event) {
	if t == nil {
		t = new(telemetry.Telemetry)
	}
	return func(ctx context.Context, e pgfence.Event) {
		w := telemetry.FenceWrite{
			Store: "postgresql", Operation: e.Op, Table: e.Table, Key: e.ID,
			Token: e.Token, Accepted: e.Outcome == "accepted", Highest: e.Highest, Latency: e.Latency,
		}
		if e.Outcome == "error" {
			w.Err = e.Err
		}
		t.RecordFenceWrite(ctx, w)
	}
}
