package ratelimit_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/ratelimit"
)

func ExampleWithBatching() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	// Handlers running at the same moment share round trips: up to 64
	// decisions per round trip. A lone request is still sent at once.
	limiter, err := ratelimit.New(goredisadapter.New(rdb), ratelimit.WithBatching(64))
	if err != nil {
		log.Fatal(err)
	}
	perUser := ratelimit.GCRA(100, time.Second, 100)
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 50*time.Millisecond)
		defer cancel()
		res, err := limiter.Allow(ctx, r.Header.Get("X-User"), perUser)
		if err == nil && !res.Allowed {
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}
	})
}
