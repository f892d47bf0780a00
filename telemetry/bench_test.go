package telemetry_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/telemetry"
)

// benchTelemetry is the SDK as a service runs it: metrics aggregated in
// memory, every span sampled and ended (then dropped: no exporter).
func benchTelemetry(b *testing.B) *telemetry.Telemetry {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tp := sdktrace.NewTracerProvider()
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) })
	tel, err := telemetry.New(telemetry.WithMeterProvider(mp), telemetry.WithTracerProvider(tp))
	if err != nil {
		b.Fatal(err)
	}
	return tel
}

// Compare the /plain and /telemetry rows: the overhead of the module.
func BenchmarkLockAcquireRelease(b *testing.B) {
	s := redistest.Start(b)
	for _, row := range []string{"plain", "telemetry"} {
		b.Run(row, func(b *testing.B) {
			var opts []lock.Option
			if row == "telemetry" {
				opts = append(opts, lock.WithHook(benchTelemetry(b).Lock))
			}
			l := newLocker(b, s, opts...)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				lease, err := l.Acquire(ctx, "bench", time.Second)
				if err != nil {
					b.Fatal(err)
				}
				if ok, err := l.Release(ctx, lease); err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

func BenchmarkRateLimitAllow(b *testing.B) {
	s := redistest.Start(b)
	c := s.Client(b, func(o *redis.Options) { o.PoolSize = 100 })
	rule := ratelimit.GCRA(1_000_000, time.Second, 1000).Named("bench")
	for _, row := range []string{"plain", "telemetry"} {
		b.Run(row, func(b *testing.B) {
			opts := []ratelimit.Option{ratelimit.WithPrefix(s.Prefix())}
			if row == "telemetry" {
				opts = append(opts, ratelimit.WithHook(benchTelemetry(b).RateLimit))
			}
			l, err := ratelimit.New(goredisadapter.New(c), opts...)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := l.Allow(ctx, "hot", rule); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// The CPU cost of one event on its own (one counter and one span), to set
// against a round trip of tens of microseconds.
func BenchmarkRecordFenceWrite(b *testing.B) {
	tel := benchTelemetry(b)
	ctx := context.Background()
	w := telemetry.FenceWrite{Store: "redis", Operation: "set", Token: 7, Accepted: true}
	b.ReportAllocs()
	for b.Loop() {
		tel.RecordFenceWrite(ctx, w)
	}
}
