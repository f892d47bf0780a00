package httprate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
)

// unreachable returns a Limiter whose Redis refuses every connection: a
// free port nobody listens on.
func unreachable(t *testing.T) *ratelimit.Limiter {
	t.Helper()
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	l, err := ratelimit.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// do serves one request through h and returns the recorded response.
func do(h http.Handler, path string, header ...string) *http.Response {
	r := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })

func byHeader(name string) func(*http.Request) (string, error) {
	return func(r *http.Request) (string, error) { return r.Header.Get(name), nil }
}

func TestSkippedRequestsNeitherCallRedisNorCount(t *testing.T) {
	skip := func(r *http.Request) bool { return r.URL.Path == "/healthz" }
	decisions := 0
	hook := func(context.Context, httprate.Event) { decisions++ }

	// Redis down and failing closed: only a request that reaches Redis fails.
	m, err := httprate.New(httprate.Config{
		Limiter: unreachable(t), Policy: ratelimit.Policy{ratelimit.SlidingLog(1, time.Minute)},
		Key: byHeader("X-Key"), Skip: skip, FailClosed: true, Hook: hook,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp := do(m.Handler(okHandler), "/healthz", "X-Key", "k"); resp.StatusCode != http.StatusOK || resp.Header.Get("RateLimit") != "" {
		t.Fatalf("skipped request with Redis down: %s, RateLimit %q", resp.Status, resp.Header.Get("RateLimit"))
	}
	if decisions != 0 {
		t.Fatalf("Hook told about a skipped request")
	}
	if resp := do(m.Handler(okHandler), "/", "X-Key", "k"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("request that is not skipped, Redis down, failing closed: %s", resp.Status)
	}

	// Redis up: skipped requests leave the limit whole.
	s := redistest.Start(t)
	l, err := ratelimit.New(goredisadapter.New(s.Client(t)), ratelimit.WithPrefix(s.Prefix()))
	if err != nil {
		t.Fatal(err)
	}
	// Failing closed within a generous timeout: a slow call on a busy machine
	// answers 503, never a 200 that would pass for "not counted".
	m, err = httprate.New(httprate.Config{
		Limiter: l, Policy: ratelimit.Policy{ratelimit.SlidingLog(1, time.Minute)}, Key: byHeader("X-Key"), Skip: skip,
		Timeout: 5 * time.Second, FailClosed: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		do(m.Handler(okHandler), "/healthz", "X-Key", "k")
	}
	if resp := do(m.Handler(okHandler), "/", "X-Key", "k"); resp.StatusCode != http.StatusOK {
		t.Fatalf("first counted request after three skipped: %s", resp.Status)
	}
	if resp := do(m.Handler(okHandler), "/", "X-Key", "k"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second counted request: %s, want 429", resp.Status)
	}
}

func TestCostCountsOneRequestAsManyAllOrNone(t *testing.T) {
	s := redistest.Start(t)
	l, err := ratelimit.New(goredisadapter.New(s.Client(t)), ratelimit.WithPrefix(s.Prefix()))
	if err != nil {
		t.Fatal(err)
	}
	policy := ratelimit.Policy{ratelimit.SlidingLog(10, time.Minute).Named("rows")}
	var last httprate.Event
	m, err := httprate.New(httprate.Config{
		Limiter: l, Policy: policy, Key: byHeader("X-Key"),
		Cost: func(r *http.Request) (int, error) {
			return strconv.Atoi(r.Header.Get("X-Rows"))
		},
		Hook: func(_ context.Context, e httprate.Event) { last = e },
	})
	if err != nil {
		t.Fatal(err)
	}
	h := m.Handler(okHandler)
	for _, step := range []struct {
		rows    string
		code    int
		r       int64
		outcome string
	}{
		{"6", http.StatusOK, 4, "allowed"},
		{"6", http.StatusTooManyRequests, 4, "rejected"}, // all or none: nothing consumed
		{"4", http.StatusOK, 0, "allowed"},
		{"1", http.StatusTooManyRequests, 0, "rejected"},
		{"11", http.StatusInternalServerError, -1, "error"}, // never admissible
		{"0", http.StatusInternalServerError, -1, "error"},
		{"many", http.StatusInternalServerError, -1, "error"},
	} {
		resp := do(h, "/", "X-Key", "tenant", "X-Rows", step.rows)
		if resp.StatusCode != step.code || last.Outcome != step.outcome {
			t.Fatalf("cost %s: %s, outcome %v; want %d, %v", step.rows, resp.Status, last.Outcome, step.code, step.outcome)
		}
		if step.r >= 0 {
			if got := checkFields(t, resp, policy)["rows"][0]; got != step.r {
				t.Fatalf("cost %s: r=%d, want %d", step.rows, got, step.r)
			}
		} else if last.Err == nil {
			t.Fatalf("cost %s: no error in the decision", step.rows)
		}
	}
}

func TestLimitedWritesTheRejectionInsteadOfTheDefault429(t *testing.T) {
	s := redistest.Start(t)
	l, err := ratelimit.New(goredisadapter.New(s.Client(t)), ratelimit.WithPrefix(s.Prefix()))
	if err != nil {
		t.Fatal(err)
	}
	m, err := httprate.New(httprate.Config{
		Limiter: l, Policy: ratelimit.Policy{ratelimit.SlidingLog(1, time.Minute).Named("api")}, Key: byHeader("X-Key"),
		Limited: func(w http.ResponseWriter, _ *http.Request, res ratelimit.Result) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprintf(w, "%s: come back in %v", res.Limit.Name(), res.RetryAfter.Round(time.Minute))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	do(m.Handler(okHandler), "/", "X-Key", "k")
	resp := do(m.Handler(okHandler), "/", "X-Key", "k")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTooManyRequests || string(body) != "api: come back in 1m0s" || resp.Header.Get("Content-Type") != "text/plain" {
		t.Fatalf("%s %q %q", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	if resp.Header.Get("Retry-After") == "" || !strings.HasPrefix(resp.Header.Get("RateLimit"), `"api";r=0;`) {
		t.Fatalf("the custom writer's response lost the headers: Retry-After %q, RateLimit %q", resp.Header.Get("Retry-After"), resp.Header.Get("RateLimit"))
	}
}

func TestLegacyHeadersDescribeTheBindingLimit(t *testing.T) {
	s := redistest.Start(t)
	l, err := ratelimit.New(goredisadapter.New(s.Client(t)), ratelimit.WithPrefix(s.Prefix()))
	if err != nil {
		t.Fatal(err)
	}
	// GCRA: X-RateLimit-Limit is the burst that Remaining counts down from.
	policy := ratelimit.Policy{ratelimit.GCRA(1, time.Second, 20).Named("burst"), ratelimit.SlidingLog(100, time.Hour).Named("hourly")}
	for _, mode := range []string{"", "seconds", "unix"} {
		m, err := httprate.New(httprate.Config{Limiter: l, Policy: policy, Key: byHeader("X-Key"), LegacyHeaders: mode})
		if err != nil {
			t.Fatal(err)
		}
		before := time.Now()
		resp := do(m.Handler(okHandler), "/", "X-Key", fmt.Sprint("mode", mode))
		h := resp.Header
		if mode == "" {
			if h.Get("X-RateLimit-Limit")+h.Get("X-RateLimit-Remaining")+h.Get("X-RateLimit-Reset") != "" {
				t.Fatalf("legacy headers sent by default: %v", h)
			}
			continue
		}
		if h.Get("X-RateLimit-Limit") != "20" || h.Get("X-RateLimit-Remaining") != "19" {
			t.Fatalf("mode %q: Limit %q Remaining %q, want 20 and 19 (the binding GCRA)", mode, h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"))
		}
		reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		// One request's worth refills in 1s; the reset is rounded up.
		lo, hi := int64(1), int64(1)
		if mode == "unix" {
			lo, hi = before.Unix()+1, time.Now().Add(time.Second).Unix()+1
		}
		if reset < lo || reset > hi {
			t.Fatalf("mode %q: Reset %d, want within [%d, %d]", mode, reset, lo, hi)
		}
	}
	if _, err := httprate.New(httprate.Config{Limiter: l, Policy: policy, Key: byHeader("X-Key"), LegacyHeaders: "Unix"}); !errors.Is(err, httprate.ErrInvalidConfig) {
		t.Fatalf("LegacyHeaders \"Unix\": %v", err)
	}
}

func TestHookAndLoggerSeeEveryOutcome(t *testing.T) {
	s := redistest.Start(t)
	up, err := ratelimit.New(goredisadapter.New(s.Client(t)), ratelimit.WithPrefix(s.Prefix()))
	if err != nil {
		t.Fatal(err)
	}
	down := unreachable(t)
	policy := ratelimit.Policy{ratelimit.SlidingLog(1, time.Minute).Named("api")}

	var (
		mu   sync.Mutex
		seen []httprate.Event
		ctxs []context.Context
		logs bytes.Buffer
	)
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	cfg := func(l *ratelimit.Limiter, failClosed bool) httprate.Config {
		return httprate.Config{
			Limiter: l, Policy: policy, Key: byHeader("X-Key"), FailClosed: failClosed, Logger: logger,
			Hook: func(ctx context.Context, e httprate.Event) {
				mu.Lock()
				seen, ctxs = append(seen, e), append(ctxs, ctx)
				mu.Unlock()
			},
		}
	}
	handler := func(c httprate.Config) http.Handler {
		m, err := httprate.New(c)
		if err != nil {
			t.Fatal(err)
		}
		return m.Handler(okHandler)
	}
	do(handler(cfg(up, false)), "/", "X-Key", "k")
	do(handler(cfg(up, false)), "/", "X-Key", "k")
	do(handler(cfg(up, false)), "/") // no key
	do(handler(cfg(down, false)), "/", "X-Key", "k")
	do(handler(cfg(down, true)), "/", "X-Key", "k")

	want := []string{"allowed", "rejected", "error", "failed_open", "failed_closed"}
	if len(seen) != len(want) {
		t.Fatalf("%d decisions, want %d: %+v", len(seen), len(want), seen)
	}
	for i, d := range seen {
		if d.Outcome != want[i] {
			t.Fatalf("decision %d: %v, want %v", i, d.Outcome, want[i])
		}
		decided := d.Outcome == "allowed" || d.Outcome == "rejected"
		if decided != (d.Err == nil) || decided != (d.Result.Limit.Name() == "api") {
			t.Fatalf("decision %d (%v): err %v, limit %q", i, d.Outcome, d.Err, d.Result.Limit.Name())
		}
		if d.Outcome != "error" && (d.Latency <= 0 || d.Key != "k" || d.Cost != 1) {
			t.Fatalf("decision %d (%v): latency %v key %q cost %d", i, d.Outcome, d.Latency, d.Key, d.Cost)
		}
		if d.Request == nil || d.Request.URL.Path != "/" || ctxs[i] != d.Request.Context() {
			t.Fatalf("decision %d (%v): request %v, context not the request's", i, d.Outcome, d.Request)
		}
	}
	if seen[0].Result.Remaining != 0 || !seen[0].Result.Allowed || seen[1].Result.Allowed {
		t.Fatalf("results: %+v, %+v", seen[0].Result, seen[1].Result)
	}

	// Logged: the three answers an operator acts on, and nothing else.
	var records []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		records = append(records, rec)
	}
	wantLogs := [][2]string{{"ERROR", "error"}, {"WARN", "failed_open"}, {"WARN", "failed_closed"}}
	if len(records) != len(wantLogs) {
		t.Fatalf("%d log records, want %d:\n%s", len(records), len(wantLogs), logs.String())
	}
	for i, rec := range records {
		if rec["level"] != wantLogs[i][0] || rec["outcome"] != wantLogs[i][1] || rec["error"] == nil {
			t.Fatalf("log record %d: %v, want level %s outcome %s with an error", i, rec, wantLogs[i][0], wantLogs[i][1])
		}
	}
}

// Without a Logger nothing is logged, not even to slog's default logger.
func TestNothingIsLoggedByDefault(t *testing.T) {
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	m, err := httprate.New(httprate.Config{
		Limiter: unreachable(t), Policy: ratelimit.Policy{ratelimit.SlidingLog(1, time.Minute)}, Key: byHeader("X-Key"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp := do(m.Handler(okHandler), "/", "X-Key", "k"); resp.StatusCode != http.StatusOK {
		t.Fatalf("failing open: %s", resp.Status)
	}
	do(m.Handler(okHandler), "/")
	if logs.Len() != 0 {
		t.Fatalf("logged without a Logger:\n%s", logs.String())
	}
}
