module github.com/redis-primitives/go/ratelimit

go 1.26.0
