package httprate_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
)

// BenchmarkMiddleware is one allowed request through the middleware, with
// no hook set: allocs/op is what Config's hooks must not raise.
func BenchmarkMiddleware(b *testing.B) {
	s := redistest.Start(b)
	l, err := ratelimit.New(goredisadapter.New(s.Client(b)), ratelimit.WithPrefix(s.Prefix()))
	if err != nil {
		b.Fatal(err)
	}
	m, err := httprate.New(httprate.Config{
		Limiter: l,
		Policy:  ratelimit.Policy{ratelimit.GCRA(1_000_000, time.Second, 1_000_000).Named("api")},
		Key:     func(*http.Request) (string, error) { return "bench", nil },
	})
	if err != nil {
		b.Fatal(err)
	}
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest("GET", "/", nil)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}
