module github.com/redis-primitives/go/experiments

go 1.26.0

require (
	github.com/redis-primitives/go/internal/redistest v0.1.0
	github.com/redis-primitives/go/luascripts v0.1.0
	github.com/redis-primitives/go/ratelimit v0.1.0
)
