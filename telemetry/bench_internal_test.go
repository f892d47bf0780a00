package telemetry

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/redis-primitives/go/lock"
)

// The CPU cost of the two events of an acquire and its release, with no
// round trip around them: the module's own share of
// BenchmarkLockAcquireRelease's /telemetry row, measurable on a noisy
// machine where the round trip's variance hides it.
func BenchmarkLockEvents(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tp := sdktrace.NewTracerProvider()
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) })
	tel, err := New(WithMeterProvider(mp), WithTracerProvider(tp))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	acquired := lock.Event{Op: "acquire", Outcome: "acquired", Name: "bench", Token: 7, Latency: 80 * time.Microsecond}
	released := lock.Event{Op: "release", Outcome: "released", Name: "bench", Token: 7, Latency: 80 * time.Microsecond, HeldFor: time.Millisecond}
	b.ReportAllocs()
	for b.Loop() {
		tel.Lock(ctx, acquired)
		tel.Lock(ctx, released)
	}
}
