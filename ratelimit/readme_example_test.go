package ratelimit_test

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
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

func TestTheReadmesRatelimitSnippetAnswers429WithRetryAfterAnd503WithoutRedis(t *testing.T) {
	rdb, l := limiter(t, redistest.Start(t))
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := perUser(l, next)
	serve := func(user string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-User", user)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for i := range 100 {
		if w := serve("ann"); w.Code != http.StatusNoContent {
			t.Fatalf("request %d of 100: %d, want the handler's 204", i+1, w.Code)
		}
	}
	w := serve("ann")
	retry, err := strconv.Atoi(w.Header().Get("Retry-After"))
	if w.Code != http.StatusTooManyRequests || err != nil || retry < 1 || retry > 60 {
		t.Fatalf("request 101: %d, Retry-After %q; want 429 and 1..60 seconds", w.Code, w.Header().Get("Retry-After"))
	}
	if w := serve("bob"); w.Code != http.StatusNoContent {
		t.Fatalf("another user's first request: %d, want 204", w.Code)
	}
	if err := rdb.Close(); err != nil {
		t.Fatal(err)
	}
	if w := serve("bob"); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("a request with the client closed: %d, want 503", w.Code)
	}
}
