package main

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/ratelimit"
)

// luaLog is the project's sliding-window log: trim, count, decide and
// record in one script, so no caller can slip in between.
func luaLog(ctx context.Context, c *redis.Client, key string, limit int, _ *int64) (bool, error) {
	l, err := ratelimit.New(goredisadapter.New(c))
	if err != nil {
		return false, err
	}
	res, err := l.Allow(ctx, key, ratelimit.SlidingLog(limit, window))
	return res.Allowed, err
}

// luaRecorded reads the log's count with the read-only Peek, which
// consumes nothing.
func luaRecorded(ctx context.Context, c *redis.Client, key string, limit int) (int64, error) {
	l, err := ratelimit.New(goredisadapter.New(c))
	if err != nil {
		return 0, err
	}
	res, err := l.Peek(ctx, key, ratelimit.SlidingLog(limit, window))
	return int64(limit - res.Remaining), err
}
