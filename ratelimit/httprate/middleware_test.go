package httprate_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
	"github.com/redis-primitives/go/ratelimit/ratelimittest"
)

type served struct {
	srv   *httptest.Server
	calls atomic.Int64
	errs  atomic.Value // last error in an Event given to Hook
}

func serve(t *testing.T, s *redistest.Server, cfg httprate.Config) *served {
	t.Helper()
	l, err := ratelimit.New(goredisadapter.New(s.Client(t)), ratelimit.WithPrefix(s.Prefix()+"rl:"))
	if err != nil {
		t.Fatal(err)
	}
	out := &served{}
	cfg.Limiter = l
	if cfg.Key == nil {
		cfg.Key, err = httprate.ClientIP(httprate.ClientIPConfig{})
		if err != nil {
			t.Fatal(err)
		}
	}
	cfg.Hook = func(_ context.Context, e httprate.Event) {
		if e.Err != nil {
			out.errs.Store(e.Err)
		}
	}
	m, err := httprate.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out.srv = httptest.NewServer(m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out.calls.Add(1)
		_, _ = io.WriteString(w, "ok")
	})))
	t.Cleanup(out.srv.Close)
	return out
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestMiddlewareSendsRateLimitFieldsAndA429Problem(t *testing.T) {
	s := redistest.Start(t)
	api := ratelimit.SlidingLog(3, time.Minute).Named("api")
	daily := ratelimit.SlidingCounter(1000, 24*time.Hour).Named("daily")
	sv := serve(t, s, httprate.Config{Policy: ratelimit.Policy{api, daily}})

	for i := range 3 {
		resp, body := get(t, sv.srv.URL)
		if resp.StatusCode != http.StatusOK || string(body) != "ok" {
			t.Fatalf("request %d: %s %q", i, resp.Status, body)
		}
		if got, want := resp.Header.Get("RateLimit-Policy"), `"api";q=3;w=60, "daily";q=1000;w=86400`; got != want {
			t.Fatalf("RateLimit-Policy = %s, want %s", got, want)
		}
		if i == 0 {
			if got := resp.Header.Get("RateLimit"); got[:len(`"api";r=2;t=60, "daily";r=999;t=`)] != `"api";r=2;t=60, "daily";r=999;t=` {
				t.Fatalf("RateLimit = %s", got)
			}
		}
	}
	resp, body := get(t, sv.srv.URL)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("4th request: %s, want 429", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q", ct)
	}
	ra := resp.Header.Get("Retry-After")
	if ra != "60" && ra != "59" {
		t.Fatalf("Retry-After %q, want the log's oldest entry aging out in about 60s, in whole seconds rounded up", ra)
	}
	var p struct {
		Type, Title, Detail string
		Status              int
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Status != 429 || p.Title != "Too Many Requests" || p.Detail == "" {
		t.Fatalf("problem body %s: %+v, %v", body, p, err)
	}
	if got := resp.Header.Get("RateLimit"); got[:len(`"api";r=0;t=`)] != `"api";r=0;t=` {
		t.Fatalf("RateLimit on the 429 = %s", got)
	}
	if n := sv.calls.Load(); n != 3 {
		t.Fatalf("handler ran %d times, want 3", n)
	}
}

func TestNewRejectsAConfigThatCannotWork(t *testing.T) {
	key, _ := httprate.ClientIP(httprate.ClientIPConfig{})
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	l, err := ratelimit.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	p := ratelimit.Policy{ratelimit.SlidingLog(1, time.Second)}
	for name, cfg := range map[string]httprate.Config{
		"no limiter":       {Policy: p, Key: key},
		"nil *Limiter":     {Limiter: (*ratelimit.Limiter)(nil), Policy: p, Key: key},
		"nil double":       {Limiter: (*ratelimittest.Limiter)(nil), Policy: p, Key: key},
		"no policy":        {Limiter: l, Key: key},
		"no key":           {Limiter: l, Policy: p},
		"negative timeout": {Limiter: l, Policy: p, Key: key, Timeout: -1},
		// Policies that every request would fail on, with a misleading 500.
		"zero limit":     {Limiter: l, Policy: ratelimit.Policy{{}}, Key: key},
		"limit twice":    {Limiter: l, Policy: ratelimit.Policy{p[0], p[0]}, Key: key},
		"gcra too exact": {Limiter: l, Policy: ratelimit.Policy{ratelimit.GCRA(1, 24*time.Hour, 1_000_000)}, Key: key},
	} {
		if _, err := httprate.New(cfg); !errors.Is(err, httprate.ErrInvalidConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A key function that yields no key is a bug or an attack, not an outage:
// failing open on it would let a client skip the limit by sending a request
// that maps to nothing. And a key with braces is metered like any other.
func TestRequestWithNoKeyIsRefusedEvenWhenFailingOpen(t *testing.T) {
	s := redistest.Start(t)
	sv := serve(t, s, httprate.Config{
		Policy: ratelimit.Policy{ratelimit.SlidingLog(1, time.Minute)}, // failing open, the zero FailClosed
		Key:    func(r *http.Request) (string, error) { return r.Header.Get("X-API-Key"), nil },
	})
	req := func(key string) int {
		r, err := http.NewRequest("GET", sv.srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("X-API-Key", key)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := 0; i < 3; i++ {
		if code := req(""); code != http.StatusInternalServerError {
			t.Fatalf("request %d with no key: %d, want 500", i, code)
		}
	}
	if code := req("k}{"); code != http.StatusOK {
		t.Fatalf("first request with a braced key: %d", code)
	}
	if code := req("k}{"); code != http.StatusTooManyRequests {
		t.Fatalf("second request with a braced key: %d, want 429", code)
	}
	if n := sv.calls.Load(); n != 1 {
		t.Fatalf("handler ran %d times, want 1", n)
	}
}

// Behind a trusted proxy that writes the client's port into the header,
// ClientIP used to stop at the proxy: every client shared its key, and one
// limit for all. (The two IPv6 clients are in different /64s: one /64 is
// one client's key.)
func TestTwoClientsBehindATrustedProxyThatWritesPortsGetTwoKeys(t *testing.T) {
	s := redistest.Start(t)
	xff, err := httprate.ClientIP(httprate.ClientIPConfig{TrustedProxies: []string{"127.0.0.1", "::1"}}) // the test's proxy is the loopback peer
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := httprate.ClientIP(httprate.ClientIPConfig{TrustedProxies: []string{"127.0.0.1", "::1"}, Header: "Forwarded"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, header string
		key          func(*http.Request) (string, error)
		a, b         string
	}{
		{"X-Forwarded-For ipv4", "X-Forwarded-For", xff, "203.0.113.7:4711", "203.0.113.8:4711"},
		{"X-Forwarded-For ipv6", "X-Forwarded-For", xff, "[2001:db8::1]:4711", "[2001:db8:0:1::2]:4711"},
		{"Forwarded ipv4", "Forwarded", fwd, `for="203.0.113.7:4711"`, `for="203.0.113.8:4711"`},
		{"Forwarded ipv6", "Forwarded", fwd, `for="[2001:db8::1]:4711"`, `for="[2001:db8:0:1::2]:4711"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sv := serve(t, s, httprate.Config{
				Policy: ratelimit.Policy{ratelimit.SlidingLog(1, time.Minute)},
				Key:    func(r *http.Request) (string, error) { k, err := tc.key(r); return tc.name + ":" + k, err },
			})
			code := func(value string) int {
				r, err := http.NewRequest("GET", sv.srv.URL, nil)
				if err != nil {
					t.Fatal(err)
				}
				r.Header.Set(tc.header, value)
				resp, err := http.DefaultClient.Do(r)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.StatusCode
			}
			if c := code(tc.a); c != http.StatusOK {
				t.Fatalf("first client: %d", c)
			}
			if c := code(tc.b); c != http.StatusOK {
				t.Fatalf("second client, %s: %d; want 200, its own key", tc.b, c)
			}
			if c := code(tc.a); c != http.StatusTooManyRequests {
				t.Fatalf("first client again: %d, want 429", c)
			}
		})
	}
}
