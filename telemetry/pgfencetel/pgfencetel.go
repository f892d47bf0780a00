// Package pgfencetel reports pgfence's verdicts through a
// telemetry.Telemetry. It is a package of its own so that importing
// package telemetry does not pull in pgfence's PostgreSQL driver.
package pgfencetel

import (
	"context"

	"github.com/redis-primitives/go/fence/pgfence"
	"github.com/redis-primitives/go/telemetry"
)

// Hook returns the option that reports every verdict of a pgfence Store to
// t: fence.writes and fence.write.duration with fence.store "postgresql",
// fence.operation (update or guard), fence.outcome (accepted, stale or
// error) and fence.table (the row id as fence.key only with
// telemetry.WithKeys), and a "fence.write" span with the tokens. It sets
// the Store's hook (pgfence.WithHook): an option given after it replaces
// it.
func Hook(t *telemetry.Telemetry) pgfence.Option {
	return pgfence.WithHook(func(ctx context.Context, e pgfence.Event) {
		w := telemetry.FenceWrite{
			Store: "postgresql", Operation: string(e.Op), Table: e.Table, Key: e.ID,
			Token: e.Token, Accepted: e.Outcome == pgfence.OutcomeAccepted, Highest: e.Highest, Latency: e.Latency,
		}
		if e.Outcome == pgfence.OutcomeError {
			w.Err = e.Err
		}
		t.RecordFenceWrite(ctx, w)
	})
}
