module github.com/redis-primitives/go/robustness

go 1.26.0

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/jackc/pgx/v5 v5.9.2
	github.com/redis-primitives/go/election v0.1.0
	github.com/redis-primitives/go/fence v0.1.0
	github.com/redis-primitives/go/fence/pgfence v0.1.0
	github.com/redis-primitives/go/goredisadapter v0.1.0
	github.com/redis-primitives/go/internal/luascripts v0.1.0
	github.com/redis-primitives/go/internal/redistest v0.1.0
	github.com/redis-primitives/go/lock v0.1.0
	github.com/redis-primitives/go/ratelimit v0.1.0
	github.com/redis-primitives/go/rueidisadapter v0.1.0
	github.com/redis-primitives/go/semaphore v0.1.0
	github.com/redis-primitives/go/valkeyadapter v0.1.0
	github.com/redis/go-redis/v9 v9.23.0
	github.com/redis/rueidis v1.0.79
	github.com/valkey-io/valkey-go v1.0.79
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)
