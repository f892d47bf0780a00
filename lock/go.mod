module github.com/redis-primitives/go/lock

go 1.26.0
