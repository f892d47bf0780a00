package telemetry_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
	"github.com/redis-primitives/go/semaphore"
	"github.com/redis-primitives/go/semaphore/httpsem"
	"github.com/redis-primitives/go/telemetry"
)

// Examples that need a server only compile; the tests run the same calls
// against real servers.

// One Telemetry per process; each primitive takes its method of the same
// name as its hook.
func Example() {
	// The global providers, as set by otel.SetMeterProvider and
	// otel.SetTracerProvider at start-up (an exporter's setup).
	tel, err := telemetry.New(
		telemetry.WithMeterProvider(otel.GetMeterProvider()),
		telemetry.WithTracerProvider(otel.GetTracerProvider()),
	)
	if err != nil {
		log.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	client := goredisadapter.New(rdb)
	locker, _ := lock.New(client, lock.WithHook(tel.Lock))
	limiter, _ := ratelimit.New(client, ratelimit.WithHook(tel.RateLimit))
	store, _ := fence.New(client, fence.WithHook(tel.Fence))
	issuer, _ := semaphore.New(client, semaphore.WithHook(tel.Semaphore))
	leader, _ := election.New(client, election.Config{Name: "reports", Hook: tel.Election})
	_, _, _, _, _ = locker, limiter, store, issuer, leader
}

// The rate-limit middleware's outcomes, failing open among them, counted
// by httprate.requests; the limiter's own decisions by ratelimit.decisions.
func ExampleTelemetry_HTTPRate() {
	tel, err := telemetry.New()
	if err != nil {
		log.Fatal(err)
	}
	limiter, _ := ratelimit.New(goredisadapter.New(redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})), ratelimit.WithHook(tel.RateLimit))
	m, err := httprate.New(httprate.Config{
		Limiter: limiter,
		Policy:  ratelimit.Policy{ratelimit.SlidingLog(100, time.Minute).Named("minute")},
		Key:     func(r *http.Request) (string, error) { return r.Header.Get("X-API-Key"), nil }, // failing open, the zero FailClosed
		Hook:    tel.HTTPRate,
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = m.Handler(http.NotFoundHandler())
}

// The concurrency-limit middleware's outcomes, failing open among them,
// counted by httpsem.requests; the Issuer's own acquires, renewals and
// releases by semaphore.operation.duration.
func ExampleTelemetry_HTTPSem() {
	tel, err := telemetry.New()
	if err != nil {
		log.Fatal(err)
	}
	issuer, _ := semaphore.New(goredisadapter.New(redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})), semaphore.WithHook(tel.Semaphore))
	m, err := httpsem.New(httpsem.Config{
		Issuer:   issuer,
		Key:      func(r *http.Request) (string, error) { return "exports:" + r.Header.Get("X-API-Key"), nil },
		Capacity: 4, // failing open, the zero FailClosed
		Hook:     tel.HTTPSem,
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = m.Handler(http.NotFoundHandler())
}

// An Issuer's acquires, waits, renewals, releases and losses as metrics and
// spans.
func ExampleTelemetry_Semaphore() {
	tel, err := telemetry.New()
	if err != nil {
		log.Fatal(err)
	}
	issuer, _ := semaphore.New(goredisadapter.New(redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})), semaphore.WithHook(tel.Semaphore))
	_ = issuer.WithPermit(context.Background(), "render-workers", 4, time.Minute, func(ctx context.Context, p *semaphore.Permit) error {
		return nil // the work, under permit p
	})
}

// Lock names as attributes, for a Locker with a few fixed names.
func ExampleWithLockNames() {
	tel, err := telemetry.New(telemetry.WithLockNames())
	if err != nil {
		log.Fatal(err)
	}
	locker, _ := lock.New(goredisadapter.New(redis.NewClient(&redis.Options{Addr: "localhost:6379"})), lock.WithHook(tel.Lock))
	_, _ = locker.Acquire(context.Background(), "nightly-report", time.Minute)
}

// Semaphore names as attributes, for an Issuer with a few fixed names.
func ExampleWithSemaphoreNames() {
	tel, err := telemetry.New(telemetry.WithSemaphoreNames())
	if err != nil {
		log.Fatal(err)
	}
	issuer, _ := semaphore.New(goredisadapter.New(redis.NewClient(&redis.Options{Addr: "localhost:6379"})), semaphore.WithHook(tel.Semaphore))
	_, _ = issuer.Acquire(context.Background(), "render-workers", 4, time.Minute)
}

// An Elector has one Hook: keep your own next to telemetry's by calling
// both.
func ExampleTelemetry_Election() {
	tel, _ := telemetry.New()
	_, _ = election.New(goredisadapter.New(redis.NewClient(&redis.Options{Addr: "localhost:6379"})), election.Config{
		Name: "reports",
		Hook: func(ctx context.Context, e election.Event) {
			tel.Election(ctx, e)
			if e.Op == "demoted" {
				log.Printf("stepped down from epoch %d after %v: %v", e.Epoch, e.Held, e.Reason)
			}
		},
	})
}

// A Locker's acquires, waits, renewals, releases and losses as metrics and
// spans.
func ExampleTelemetry_Lock() {
	tel, _ := telemetry.New()
	locker, _ := lock.New(goredisadapter.New(redis.NewClient(&redis.Options{Addr: "localhost:6379"})), lock.WithHook(tel.Lock))
	_ = locker.WithLock(context.Background(), "nightly-report", time.Minute, func(ctx context.Context, l *lock.Lease) error {
		return nil // the work, under lease l
	})
}

// A Limiter's decisions by binding limit: name the limits.
func ExampleTelemetry_RateLimit() {
	tel, _ := telemetry.New()
	limiter, _ := ratelimit.New(goredisadapter.New(redis.NewClient(&redis.Options{Addr: "localhost:6379"})), ratelimit.WithHook(tel.RateLimit))
	_, _ = limiter.Allow(context.Background(), "user:42", ratelimit.GCRA(10, time.Second, 20).Named("per-second"))
}

// A Store's verdicts: fence.writes counts the stale writes it kept out.
func ExampleTelemetry_Fence() {
	tel, _ := telemetry.New()
	store, _ := fence.New(goredisadapter.New(redis.NewClient(&redis.Options{Addr: "localhost:6379"})), fence.WithHook(tel.Fence))
	_ = store.Set(context.Background(), 7, "report:latest", "v7")
}

// A store of your own reports its verdicts the same way; here read back
// through the SDK's in-memory reader.
func ExampleTelemetry_RecordFenceWrite() {
	reader := sdkmetric.NewManualReader()
	tel, err := telemetry.New(telemetry.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	tel.RecordFenceWrite(ctx, telemetry.FenceWrite{Store: "s3", Operation: "put", Token: 7, Accepted: true, Latency: 3 * time.Millisecond})
	tel.RecordFenceWrite(ctx, telemetry.FenceWrite{Store: "s3", Operation: "put", Token: 6, Highest: 7, Latency: 2 * time.Millisecond})

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(ctx, &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		sum, ok := m.Data.(metricdata.Sum[int64]) // fence.writes; fence.write.duration is a histogram
		if !ok {
			continue
		}
		for _, p := range sum.DataPoints {
			outcome, _ := p.Attributes.Value(attribute.Key("fence.outcome"))
			fmt.Println(m.Name, outcome.AsString(), p.Value)
		}
	}
	// Unordered output:
	// fence.writes accepted 1
	// fence.writes stale 1
}
