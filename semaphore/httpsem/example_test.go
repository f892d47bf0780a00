package httpsem_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/semaphore"
	"github.com/redis-primitives/go/semaphore/httpsem"
)

// At most 4 exports per API key in flight; the fifth gets 429. Compiled,
// not run: it listens on :8080.
func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	sem, err := semaphore.New(goredisadapter.New(rdb))
	if err != nil {
		log.Fatal(err)
	}
	limit, err := httpsem.New(httpsem.Config{
		Issuer:   sem,
		Key:      func(r *http.Request) (string, error) { return "exports:" + r.Header.Get("X-API-Key"), nil },
		Capacity: 4,
	})
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/exports", limit.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// r.Context() ends if the permit can no longer be proven.
	})))
	log.Fatal(http.ListenAndServe(":8080", nil))
}

// One export in flight per tenant: a second, sent while the first runs,
// is refused with 429, Retry-After and a problem+json body.
func ExampleMiddleware_Handler() {
	m, err := httpsem.New(httpsem.Config{
		Issuer:   issuer,
		Key:      func(r *http.Request) (string, error) { return "exports:" + r.Header.Get("X-Tenant"), nil },
		Capacity: 1,
	})
	if err != nil {
		log.Fatal(err)
	}
	var h http.Handler
	h = m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Second") == "" { // while this one runs, the tenant's second
			second := httptest.NewRequest("POST", "/exports", nil)
			second.Header.Set("X-Tenant", r.Header.Get("X-Tenant"))
			second.Header.Set("X-Second", "1")
			w2 := httptest.NewRecorder()
			h.ServeHTTP(w2, second)
			body, _ := io.ReadAll(w2.Body)
			fmt.Printf("second: %d Retry-After: %s %s %s", w2.Code, w2.Header().Get("Retry-After"), w2.Header().Get("Content-Type"), body)
		}
		fmt.Fprintln(w, "exported")
	}))
	first := httptest.NewRequest("POST", "/exports", nil)
	first.Header.Set("X-Tenant", "42")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, first)
	fmt.Printf("first: %d %s", w.Code, w.Body)
	// Output:
	// second: 429 Retry-After: 1 application/problem+json {"detail":"requests of this key already in flight: 1","status":429,"title":"Too Many Requests","type":"about:blank"}
	// first: 200 exported
}

func ExampleEvent() {
	m, err := httpsem.New(httpsem.Config{
		Issuer:   issuer,
		Key:      func(*http.Request) (string, error) { return "example-event", nil },
		Capacity: 1,
		// Metrics, traces or audit logs: every request with its facts, and
		// its context (its span, for a trace).
		Hook: func(_ context.Context, e httpsem.Event) {
			fmt.Printf("%s %s %s key=%s token=%t in_flight=%d measured=%t\n",
				e.Request.Method, e.Request.URL.Path, e.Outcome, e.Key, e.Token > 0, e.InFlight, e.Latency > 0)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	var h http.Handler
	h = m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/export" { // while it runs, a second request of the key
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/status", nil))
		}
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/export", nil))
	// Output:
	// POST /export admitted key=example-event token=true in_flight=0 measured=true
	// GET /status full key=example-event token=false in_flight=1 measured=true
}
