package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/examples/internal/promtel"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

func newTestAPI(t *testing.T) (*api, net.Listener) {
	t.Helper()
	s := redistest.Start(t)
	a, err := newAPI(s.Addr(), s.Prefix()+"rl:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.close() })
	// The first decision on a fresh server sends the script's source
	// (NOSCRIPT, then EVAL). On a busy machine that can outlast the
	// middleware's 100 ms timeout and fail open, so warm the server's script
	// cache through a limiter of its own (nothing counted or observed here):
	// the tests then time decisions only.
	warm, err := ratelimit.New(goredisadapter.New(s.Client(t)), ratelimit.WithPrefix(s.Prefix()+"warm-up:"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := warm.Allow(context.Background(), "warm-up", policy); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return a, ln
}

const wantPolicy = `"burst";q=5;w=2, "minute";q=20;w=60`

func TestSixthRequestInTheBurstGets429WithRetryAfterAndWaitingItIsEnough(t *testing.T) {
	a, ln := newTestAPI(t)
	var out bytes.Buffer
	log, err := selfDrive(context.Background(), a, ln, &out)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	var statuses = map[string][]int{}
	for _, e := range log {
		statuses[e.who] = append(statuses[e.who], e.status)
		if e.policy != wantPolicy || e.fields == "" {
			t.Errorf("%s: RateLimit-Policy %q, RateLimit %q", e.who, e.policy, e.fields)
		}
		if e.status == http.StatusTooManyRequests {
			secs, err := strconv.Atoi(e.retryAfter)
			if err != nil || secs < 1 || secs > 2 {
				t.Errorf("Retry-After %q, want 1 or 2 seconds for a 2 s window", e.retryAfter)
			}
			if e.problem.Status != http.StatusTooManyRequests || e.problem.Title == "" {
				t.Errorf("problem body %+v", e.problem)
			}
		}
	}
	want := map[string][]int{
		"alice": {200, 200, 200, 200, 200, 429, 429, 200}, // the last one after waiting Retry-After
		"bob":   {200, 200},                               // another key, its own allowance
	}
	for who, w := range want {
		if got := statuses[who]; !equal(got, w) {
			t.Errorf("%s: statuses %v, want %v", who, got, w)
		}
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// -serve mode: requests without a usable API key are limited by client IP,
// and the server shuts down when its context ends.
func TestServeLimitsRequestsWithoutAKeyByIPAndStopsOnCancel(t *testing.T) {
	a, ln := newTestAPI(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- a.serve(ctx, ln) }()

	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	hc := &http.Client{Transport: transport, Timeout: 5 * time.Second}
	var fields []string
	for _, key := range []string{"", "not{a}key"} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/hello", nil)
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("key %q: status %d", key, resp.StatusCode)
		}
		fields = append(fields, resp.Header.Get("RateLimit"))
	}
	// Both were counted against the same IP.
	if want := []string{`"burst";r=4;`, `"burst";r=3;`}; !strings.HasPrefix(fields[0], want[0]) || !strings.HasPrefix(fields[1], want[1]) {
		t.Errorf("RateLimit fields %q, want prefixes %q", fields, want)
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return within 10s of its context ending")
	}
}

// An operator could not see a limiter's rejections, nor which limit made
// them. After the self-driven run, /metrics counts alice's two refusals
// under the limit that refused them (burst) and the other eight requests
// as allowed; keys are not labels.
func TestMetricsCountRejectionsByTheLimitThatRefused(t *testing.T) {
	a, ln := newTestAPI(t)
	if _, err := selfDrive(context.Background(), a, ln, io.Discard); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	a.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d", rec.Code)
	}
	page := rec.Body.String()
	scrape, err := promtel.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v\n%s", err, page)
	}
	const decisions = "ratelimit_decisions_total"
	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"ratelimit_outcome": "rejected", "ratelimit_limit_name": "burst", "ratelimit_operation": "allow"}, 2},
		{map[string]string{"ratelimit_outcome": "rejected", "ratelimit_limit_name": "minute"}, 0},
		{map[string]string{"ratelimit_outcome": "allowed"}, 8},
		{map[string]string{"ratelimit_outcome": "error"}, 0},
	} {
		if got, _ := scrape.Sum(decisions, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", decisions, c.labels, got, c.want)
		}
	}
	// The middleware's view of the same requests, by what it did with them.
	const requests = "httprate_requests_total"
	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"httprate_outcome": "rejected", "ratelimit_limit_name": "burst"}, 2},
		{map[string]string{"httprate_outcome": "allowed"}, 8},
		{map[string]string{"httprate_outcome": "failed_open"}, 0},
	} {
		if got, _ := scrape.Sum(requests, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", requests, c.labels, got, c.want)
		}
	}
	if got, found := scrape.Sum("ratelimit_decision_duration_seconds", map[string]string{"ratelimit_outcome": "rejected"}); !found || got != 2 {
		t.Errorf("ratelimit_decision_duration_seconds{rejected} count %v (found %v), want 2", got, found)
	}
	if strings.Contains(page, "alice") {
		t.Errorf("/metrics names a key (alice): keys must not be labels\n%s", page)
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", page)
	}
}
