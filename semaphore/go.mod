module github.com/redis-primitives/go/semaphore

go 1.25.0

require (
	github.com/redis-primitives/go/fence v0.1.0
	github.com/redis-primitives/go/goredisadapter v0.1.0
	github.com/redis-primitives/go/internal/luascripts v0.1.0
	github.com/redis-primitives/go/internal/redistest v0.1.0
	github.com/redis/go-redis/v9 v9.7.3
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	go.uber.org/goleak v1.3.0 // indirect
)
