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
// t: fence.writes with fence.store "postgresql", fence.operation (update or
// guard), fence.outcome and fence.table (the row id as fence.key only with
// telemetry.WithKeys), and a "fence.write" span with the tokens. It sets
// the Store's hook (pgfence.WithHook): an option given after it replaces
// it.
func Hook(t *telemetry.Telemetry) pgfence.Option {
	return pgfence.WithHook(func(ctx context.Context, d pgfence.Decision) {
		t.RecordFenceWrite(ctx, telemetry.FenceWrite{
			Store: "postgresql", Operation: d.Op, Table: d.Table, Key: d.ID,
			Token: d.Token, Accepted: d.Accepted, Highest: d.Highest,
		})
	})
}
