module github.com/redis-primitives/go/fence

go 1.26.0
