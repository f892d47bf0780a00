package telemetry_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
	"github.com/redis-primitives/go/semaphore/httpsem"
	"github.com/redis-primitives/go/telemetry"
)

// semHandler is a middleware on i, capacity 1, keyed by X-Key (a key
// "fail" makes Key fail), around a handler that sends, for path /hold, a
// second request of the same key while it holds its permit.
func semHandler(t *testing.T, o *sdk, i *semaphore.Issuer, failClosed bool) http.Handler {
	t.Helper()
	m, err := httpsem.New(httpsem.Config{
		Issuer: i, Capacity: 1, FailClosed: failClosed, Hook: o.HTTPSem,
		Key: func(r *http.Request) (string, error) {
			if k := r.Header.Get("X-Key"); k != "fail" {
				return k, nil
			}
			return "", errors.New("no key")
		},
		// An acquire left unanswered is reclaimed in the background until
		// its TTL: a short one ends that before the leak check.
		TTL: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler
	h = m.Handler(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hold" {
			return
		}
		if code := serveSem(h, "/", r.Header.Get("X-Key")); code != http.StatusTooManyRequests {
			t.Errorf("a second request while the first holds the only place: %d, want 429", code)
		}
	}))
	return h
}

// serveSem sends one request with X-Key key through h and returns its
// status.
func serveSem(h http.Handler, path, key string) int {
	r := httptest.NewRequest("GET", path, nil)
	r.Header.Set("X-Key", key)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// An Issuer that cannot reach Redis, failing open, lets every request
// through without a permit: no limit holds, and the operator had no metric
// of it. Each such request is counted as failed_open (and, failing closed,
// failed_closed), with the time its acquire took.
func TestHTTPSemFailOpenIsCounted(t *testing.T) {
	o := newOtel(t)
	port, err := redistest.FreePort() // nobody listens: every dial is refused
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	down, err := semaphore.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	open, closed := semHandler(t, o, down, false), semHandler(t, o, down, true)
	for range 3 {
		if code := serveSem(open, "/", "k"); code != http.StatusOK {
			t.Fatalf("failing open: %d, want 200", code)
		}
	}
	if code := serveSem(closed, "/", "k"); code != http.StatusServiceUnavailable {
		t.Fatalf("failing closed: %d, want 503", code)
	}
	out := attribute.Key("httpsem.outcome")
	for _, c := range []struct {
		outcome string
		want    int64
	}{{"failed_open", 3}, {"failed_closed", 1}} {
		if got := o.value(t, "httpsem.requests", out.String(c.outcome)); got != c.want {
			t.Errorf("httpsem.requests{%s} = %d, want %d", c.outcome, got, c.want)
		}
		if got := o.value(t, "httpsem.acquire.duration", out.String(c.outcome)); got != c.want {
			t.Errorf("httpsem.acquire.duration{%s} count %d, want %d", c.outcome, got, c.want)
		}
	}
}

// Decided requests are counted by outcome: admitted, full (a second
// request while the first holds the only place), error (Key failed:
// counted, not timed, for no acquire was made); the key is semaphore.name
// only WithSemaphoreNames.
func TestHTTPSemRequestsAreCountedByOutcome(t *testing.T) {
	s := redistest.Start(t)
	for _, names := range []bool{false, true} {
		var opts []telemetry.Option
		if names {
			opts = append(opts, telemetry.WithSemaphoreNames())
		}
		o := newOtel(t, opts...)
		i, err := semaphore.New(goredisadapter.New(s.Client(t)), semaphore.WithPrefix(s.Prefix()+strconv.FormatBool(names)+":"))
		if err != nil {
			t.Fatal(err)
		}
		h := semHandler(t, o, i, true)
		for range 2 {
			if code := serveSem(h, "/hold", "user:1"); code != http.StatusOK {
				t.Fatalf("names %v: first request: %d, want 200", names, code)
			}
		}
		if code := serveSem(h, "/", "fail"); code != http.StatusInternalServerError {
			t.Fatalf("names %v: Key failed: %d, want 500", names, code)
		}
		out := attribute.Key("httpsem.outcome")
		for _, c := range []struct {
			outcome   string
			key       string
			want, dur int64
		}{{"admitted", "user:1", 2, 2}, {"full", "user:1", 2, 2}, {"error", "", 1, 0}} {
			attrs := []attribute.KeyValue{out.String(c.outcome)}
			if names {
				attrs = append(attrs, attribute.Key("semaphore.name").String(c.key))
			}
			if got := o.value(t, "httpsem.requests", attrs...); got != c.want {
				t.Errorf("names %v: httpsem.requests{%s} = %d, want %d", names, c.outcome, got, c.want)
			}
			if got := o.value(t, "httpsem.acquire.duration", attrs...); got != c.dur {
				t.Errorf("names %v: httpsem.acquire.duration{%s} count %d, want %d", names, c.outcome, got, c.dur)
			}
		}
		if !names {
			for _, p := range o.points(t, "httpsem.requests") {
				if _, ok := p.attrs.Value(attribute.Key("semaphore.name")); ok {
					t.Errorf("semaphore name recorded without WithSemaphoreNames: %v", p.attrs)
				}
			}
		}
	}
}
