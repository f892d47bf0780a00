package telemetry_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
	"github.com/redis-primitives/go/telemetry"
)

// serveOne sends one request with X-Key key (none when empty) through a
// middleware on l and returns its status.
func serveOne(t *testing.T, o *sdk, l *ratelimit.Limiter, failClosed bool, key string) int {
	t.Helper()
	m, err := httprate.New(httprate.Config{
		Limiter: l, Policy: ratelimit.Policy{ratelimit.SlidingLog(1, time.Minute).Named("minute")},
		Key:        func(r *http.Request) (string, error) { return r.Header.Get("X-Key"), nil },
		Timeout:    5 * time.Second,
		FailClosed: failClosed,
		Hook:       o.HTTPRate,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	if key != "" {
		r.Header.Set("X-Key", key)
	}
	w := httptest.NewRecorder()
	m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(w, r)
	return w.Code
}

// A limiter that cannot reach Redis, failing open, serves every request
// unmetered: the operator's only sign of it was a log line. Each such
// request is counted as failed_open (and, failing closed, failed_closed),
// with the time the limiter's call took.
func TestHTTPRateFailOpenIsCounted(t *testing.T) {
	o := newOtel(t)
	port, err := redistest.FreePort() // nobody listens: every dial is refused
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	down, err := ratelimit.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if code := serveOne(t, o, down, false, "k"); code != http.StatusOK {
			t.Fatalf("failing open: %d, want 200", code)
		}
	}
	if code := serveOne(t, o, down, true, "k"); code != http.StatusServiceUnavailable {
		t.Fatalf("failing closed: %d, want 503", code)
	}
	out := attribute.Key("httprate.outcome")
	for _, c := range []struct {
		outcome string
		want    int64
	}{{"failed_open", 3}, {"failed_closed", 1}} {
		if got := o.value(t, "httprate.requests", out.String(c.outcome)); got != c.want {
			t.Errorf("httprate.requests{%s} = %d, want %d", c.outcome, got, c.want)
		}
		if got := o.value(t, "httprate.decision.duration", out.String(c.outcome)); got != c.want {
			t.Errorf("httprate.decision.duration{%s} count %d, want %d", c.outcome, got, c.want)
		}
	}
}

// Decided requests are counted by the limit that bound them, one that
// cannot be metered (no key) as error; keys are attributes only WithKeys.
func TestHTTPRateRequestsAreCountedByOutcomeAndBindingLimit(t *testing.T) {
	s := redistest.Start(t)
	for _, keys := range []bool{false, true} {
		var opts []telemetry.Option
		if keys {
			opts = append(opts, telemetry.WithKeys())
		}
		o := newOtel(t, opts...)
		l, err := ratelimit.New(goredisadapter.New(s.Client(t)), ratelimit.WithPrefix(s.Prefix()+strconv.FormatBool(keys)+":"))
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			serveOne(t, o, l, true, "user:1")
		}
		if code := serveOne(t, o, l, true, ""); code != http.StatusInternalServerError {
			t.Fatalf("no key: %d, want 500", code)
		}
		out, lim := attribute.Key("httprate.outcome"), attribute.Key("ratelimit.limit.name").String("minute")
		key := attribute.Key("ratelimit.key").String("user:1")
		for _, c := range []struct {
			outcome string
			want    int64
		}{{"allowed", 1}, {"rejected", 2}} {
			attrs := []attribute.KeyValue{out.String(c.outcome), lim}
			if keys {
				attrs = append(attrs, key)
			}
			if got := o.value(t, "httprate.requests", attrs...); got != c.want {
				t.Errorf("keys %v: httprate.requests{%s} = %d, want %d", keys, c.outcome, got, c.want)
			}
			if got := o.value(t, "httprate.decision.duration", attrs...); got != c.want {
				t.Errorf("keys %v: httprate.decision.duration{%s} count %d, want %d", keys, c.outcome, got, c.want)
			}
		}
		attrs := []attribute.KeyValue{out.String("error")}
		if keys {
			attrs = append(attrs, attribute.Key("ratelimit.key").String(""))
		}
		if got := o.value(t, "httprate.requests", attrs...); got != 1 {
			t.Errorf("keys %v: httprate.requests{error} = %d, want 1", keys, got)
		}
		if !keys {
			for _, p := range o.points(t, "httprate.requests") {
				if _, ok := p.attrs.Value(attribute.Key("ratelimit.key")); ok {
					t.Errorf("key recorded without WithKeys: %v", p.attrs)
				}
			}
		}
	}
}
