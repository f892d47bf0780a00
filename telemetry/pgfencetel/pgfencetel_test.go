package pgfencetel_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/redis-primitives/go/fence/pgfence"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/pgtest"
	"github.com/redis-primitives/go/telemetry"
	"github.com/redis-primitives/go/telemetry/pgfencetel"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// A write PostgreSQL refuses as stale is counted under fence.store
// postgresql with its table; the row id only WithKeys.
func TestStalePGFenceWriteIsCounted(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(ctx) })
	tel, err := telemetry.New(telemetry.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	store, err := pgfence.New(pgfence.WithHook(pgfencetel.Hook(tel)))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateTables(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := store.Insert(ctx, pool, "acct", "v", 5); err != nil {
		t.Fatal(err)
	}
	if err := store.Update(ctx, pool, "acct", "v6", 6); err != nil {
		t.Fatal(err)
	}
	if err := store.Update(ctx, pool, "acct", "v4", 4); !errors.Is(err, pgfence.ErrStale) {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "fence.writes" {
				continue
			}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				store, _ := p.Attributes.Value(attribute.Key("fence.store"))
				outcome, _ := p.Attributes.Value(attribute.Key("fence.outcome"))
				table, _ := p.Attributes.Value(attribute.Key("fence.table"))
				if _, ok := p.Attributes.Value(attribute.Key("fence.key")); ok {
					t.Errorf("row id recorded without WithKeys: %v", p.Attributes)
				}
				if store.AsString() != "postgresql" || table.AsString() == "" {
					t.Errorf("point %v, want fence.store postgresql and a table", p.Attributes)
				}
				got[outcome.AsString()] += p.Value
			}
		}
	}
	if got["accepted"] != 1 || got["stale"] != 1 {
		t.Fatalf("fence.writes by outcome %v, want accepted 1, stale 1", got)
	}
}
