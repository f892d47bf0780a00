module github.com/redis-primitives/go/election

go 1.26.0
