package httprate_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
	"github.com/redis-primitives/go/ratelimit/ratelimittest"
)

// newTestMiddleware is how a handler's test builds the middleware: on the
// in-memory double, with a Clock the test moves instead of sleeping.
func newTestMiddleware(policy ratelimit.Policy, key func(*http.Request) (string, error)) (*httprate.Middleware, *ratelimittest.Clock, error) {
	clock := ratelimittest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	limiter, err := ratelimittest.New(ratelimittest.WithClock(clock)) // in production: ratelimit.New(goredisadapter.New(rdb))
	if err != nil {
		return nil, nil, err
	}
	m, err := httprate.New(httprate.Config{Limiter: limiter, Policy: policy, Key: key})
	return m, clock, err
}

// A handler's unit test needs no Redis: give the middleware the in-memory
// double, which decides as the Redis Limiter does, on a Clock the test
// moves.
func ExampleLimiter_withoutRedis() {
	m, clock, err := newTestMiddleware(
		ratelimit.Policy{ratelimit.GCRA(1, time.Second, 2).Named("api")},
		func(r *http.Request) (string, error) { return r.Header.Get("X-API-Key"), nil },
	)
	if err != nil {
		log.Fatal(err)
	}
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))

	get := func() {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-API-Key", "alice")
		h.ServeHTTP(w, r)
		fmt.Println(w.Code, w.Header().Get("RateLimit"))
	}
	get()
	get()
	get() // the burst of 2 is spent
	clock.Advance(time.Second)
	get()
	// Output:
	// 200 "api";r=1;t=1
	// 200 "api";r=0;t=2
	// 429 "api";r=0;t=2
	// 200 "api";r=0;t=2
}

// The README's newTestMiddleware returns httprate.New's refusal of a bad
// config (here no key function) instead of a middleware that would
// fail every request.
func TestTheReadmesTestMiddlewareReturnsTheRefusalOfABadConfig(t *testing.T) {
	m, _, err := newTestMiddleware(ratelimit.Policy{ratelimit.GCRA(1, time.Second, 1)}, nil)
	if !errors.Is(err, httprate.ErrInvalidConfig) || m != nil {
		t.Fatalf("newTestMiddleware without a key: %v, %v; want ErrInvalidConfig and no middleware", m, err)
	}
}
