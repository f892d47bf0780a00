package httprate_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
	"github.com/redis-primitives/go/ratelimit/ratelimittest"
)

// handler is an app's handler behind the middleware, deciding with l.
func handler(t *testing.T, l httprate.Limiter, policy ratelimit.Policy, cost bool) http.Handler {
	t.Helper()
	cfg := httprate.Config{Limiter: l, Policy: policy, Key: byHeader("X-Key")}
	if cost {
		cfg.Cost = func(r *http.Request) (int, error) {
			var n int
			_, err := fmt.Sscan(r.Header.Get("X-Cost"), &n)
			return n, err
		}
	}
	m, err := httprate.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
}

// A handler's unit test with no Redis: the middleware decides with the
// in-memory double, on a Clock the test moves.
func TestHandlerBehindTheMiddlewareIsTestedWithoutRedis(t *testing.T) {
	clk := ratelimittest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l, err := ratelimittest.New(ratelimittest.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	h := handler(t, l, ratelimit.Policy{ratelimit.SlidingLog(2, time.Minute).Named("api")}, false)
	do := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-Key", "alice")
		h.ServeHTTP(w, r)
		return w
	}
	for i := range 2 {
		if w := do(); w.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i+1, w.Code, w.Body)
		}
		clk.Advance(10 * time.Second)
	}
	// Full: the oldest request leaves the window in 40s, the newest in 50s.
	w := do()
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "40" || w.Header().Get("RateLimit") != `"api";r=0;t=50` {
		t.Fatalf("third request: %d, Retry-After %q, RateLimit %q", w.Code, w.Header().Get("Retry-After"), w.Header().Get("RateLimit"))
	}
	clk.Advance(40 * time.Second)
	if w := do(); w.Code != http.StatusOK {
		t.Fatalf("after the Retry-After: %d %s", w.Code, w.Body)
	}
}

// The middleware answers the same, status, headers and body, whether it
// decides with Redis or with the double, request for request at the same
// instants.
func TestMiddlewareAnswersTheSameOnTheDoubleAsOnRedis(t *testing.T) {
	s := redistest.Start(t)
	clk := ratelimittest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 123_000, time.UTC))
	rl, err := ratelimit.New(goredisadapter.New(s.Client(t)), ratelimit.WithPrefix(s.Prefix()+"rl:"), ratelimit.WithServerTimeForTests(clk.Now))
	if err != nil {
		t.Fatal(err)
	}
	d, err := ratelimittest.New(ratelimittest.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	policy := ratelimit.Policy{ratelimit.SlidingLog(3, 10*time.Second).Named("burst"), ratelimit.GCRA(1, 5*time.Second, 4).Named("rate")}
	redis, double := handler(t, rl, policy, true), handler(t, d, policy, true)
	statuses := map[int]int{}
	for i := range 200 {
		clk.Advance(time.Duration(i%7) * 700 * time.Millisecond)
		cost := fmt.Sprint(1 + i%3)
		if i%29 == 0 {
			cost = "9" // more than any limit admits: 500
		}
		var ws [2]*httptest.ResponseRecorder
		for j, h := range []http.Handler{redis, double} {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header.Set("X-Key", []string{"a", "b"}[i%2])
			r.Header.Set("X-Cost", cost)
			ws[j] = httptest.NewRecorder()
			h.ServeHTTP(ws[j], r)
		}
		if ws[0].Code != ws[1].Code || !reflect.DeepEqual(ws[0].Header(), ws[1].Header()) || ws[0].Body.String() != ws[1].Body.String() {
			t.Fatalf("request %d (cost %s):\n redis  %d %v %s\n double %d %v %s", i, cost,
				ws[0].Code, ws[0].Header(), strings.TrimSpace(ws[0].Body.String()), ws[1].Code, ws[1].Header(), strings.TrimSpace(ws[1].Body.String()))
		}
		statuses[ws[0].Code]++
	}
	t.Logf("statuses of 200 requests, the same on both: %v", statuses)
	if statuses[http.StatusOK] < 20 || statuses[http.StatusTooManyRequests] < 20 || statuses[http.StatusInternalServerError] < 5 {
		t.Fatalf("statuses %v: the sequence does not exercise admission, rejection and refused costs", statuses)
	}
}
