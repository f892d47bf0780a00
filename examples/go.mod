module github.com/redis-primitives/go/examples

go 1.26.0
