package ratelimit_test

import (
	"context"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/ratelimit"
)

// A deploy lowers a limit from 100 to 60 per minute without forgiving
// what callers already used: for one old window, every request counts
// against both limits; after it, the old limit's keys have expired and the
// new one decides alone.
func Example_changeALimitKeepingQuotas() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	old, updated := ratelimit.SlidingCounter(100, time.Minute), ratelimit.SlidingCounter(60, time.Minute)
	deployedAt := time.Now()
	rule := func() ratelimit.Rule {
		if time.Since(deployedAt) < old.Window() {
			return ratelimit.Policy{old, updated}
		}
		return updated
	}
	res, err := limiter.Allow(context.Background(), "user:42", rule())
	if err != nil {
		log.Print(err)
		return
	}
	_ = res.Allowed
}

// The same deploy, forgiving every caller at once: drop a key's state under
// the old rule (and start the new one empty).
func Example_changeALimitDroppingQuotas() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	old := ratelimit.SlidingCounter(100, time.Minute)
	for _, key := range []string{"user:42", "user:43"} {
		if err := limiter.Reset(context.Background(), key, old); err != nil {
			log.Print(err)
		}
	}
}
