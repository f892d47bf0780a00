module github.com/redis-primitives/go/bench

go 1.26.0
