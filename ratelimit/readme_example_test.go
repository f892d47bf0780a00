package ratelimit_test

import (
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/redis-primitives/go/ratelimit"
)

// perUser is the README's ratelimit quickstart, word for word
// (examples/snippets_test.go checks it).
func perUser(limiter *ratelimit.Limiter, next http.Handler) http.Handler {
	limit := ratelimit.SlidingLog(100, time.Minute)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := limiter.Allow(r.Context(), "user:"+r.Header.Get("X-User"), limit)
		if err != nil {
			http.Error(w, "rate limit unavailable", http.StatusServiceUnavailable) // or fail open: your choice
			return
		}
		if !res.Allowed {
			w.Header().Set("Retry-After", fmt.Sprint(int(math.Ceil(res.RetryAfter.Seconds()))))
			http.Error(w, "too many requests", http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}

var _ = perUser
