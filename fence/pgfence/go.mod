module github.com/redis-primitives/go/fence/pgfence

go 1.26.0
