module github.com/redis-primitives/go/telemetry

go 1.25.0

require (
	github.com/jackc/pgx/v5 v5.9.2
	github.com/redis-primitives/go/election v0.1.0
	github.com/redis-primitives/go/fence v0.1.0
	github.com/redis-primitives/go/fence/pgfence v0.1.0
	github.com/redis-primitives/go/goredisadapter v0.1.0
	github.com/redis-primitives/go/internal/redistest v0.1.0
	github.com/redis-primitives/go/lock v0.1.0
	github.com/redis-primitives/go/ratelimit v0.1.0
	github.com/redis-primitives/go/semaphore v0.1.0
	github.com/redis/go-redis/v9 v9.7.3
	go.opentelemetry.io/otel v1.44.0
	go.opentelemetry.io/otel/metric v1.44.0
	go.opentelemetry.io/otel/sdk v1.44.0
	go.opentelemetry.io/otel/sdk/metric v1.44.0
	go.opentelemetry.io/otel/trace v1.44.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/redis-primitives/go/internal/luascripts v0.1.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)
