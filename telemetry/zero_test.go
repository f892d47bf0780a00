package telemetry_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/telemetry"
)

// A zero Telemetry once panicked at the first Acquire of a Locker given
// its Lock() option (no tracer, no instruments). It records to the global
// providers instead, as New() does.
func TestAZeroTelemetryRecordsToTheGlobalProvidersInsteadOfPanicking(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	before := otel.GetMeterProvider()
	otel.SetMeterProvider(mp)
	t.Cleanup(func() {
		otel.SetMeterProvider(before)
		_ = mp.Shutdown(context.Background())
	})

	var zero telemetry.Telemetry
	l := newLocker(t, redistest.Start(t), lock.WithHook(zero.Lock))
	lease, err := l.Acquire(context.Background(), "job", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Release(context.Background(), lease); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var calls uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == "lock.operation.duration" {
				for _, p := range h.DataPoints {
					calls += p.Count
				}
			}
		}
	}
	t.Logf("lock.operation.duration on the global meter: %d calls", calls)
	if calls != 2 {
		t.Fatalf("recorded %d lock operations, want 2 (the acquire and the release)", calls)
	}
}
