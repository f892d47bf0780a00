package election_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/internal/redistest"
)

// probe returns the handler's status and body.
func probe(t *testing.T, h http.Handler) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	return rec.Code, rec.Body.String()
}

// A node wedged while it holds a term (here Run is stuck in a blocking
// OnElected while Redis stops answering its renewals) keeps the term past
// the lease's deadline, where another node may lead: the health check fails
// then, and not before, and recovers once Run gets going and drops the term.
func TestHealthCheckFailsWhileAWedgedNodeHoldsATermPastItsDeadline(t *testing.T) {
	s := redistest.Start(t)
	const ttl, renew, tolerance = 400 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond
	relay := redistest.StartRelay(t, s.Addr())
	c := client(t, s, func(o *redis.Options) { o.Addr = relay.Addr() })
	entered, unblock := make(chan time.Time, 1), make(chan struct{})
	demoted := make(chan election.Reason, 1)
	cfg := baseConfig(s, "health", "wedged", ttl, renew)
	cfg.Observer = election.Observer{
		OnElected: func(int64) {
			entered <- time.Now()
			<-unblock // a callback that blocks, against the Observer's rule
		},
		OnDemoted: func(_ int64, r election.Reason, _ time.Duration) { demoted <- r },
	}
	e, err := election.New(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := e.HealthHandler(tolerance)
	if code, body := probe(t, h); code != http.StatusOK {
		t.Fatalf("before Run: %d %q, want 200", code, body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx, nil) }()
	var unblockOnce sync.Once
	release := func() { unblockOnce.Do(func() { close(unblock) }) }
	defer func() {
		release() // also when the test failed with the callback still blocked
		cancel()
		relay.Close() // lets the stalled client's calls fail at once
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	}()

	var elected time.Time
	select {
	case elected = <-entered:
	case err := <-done:
		done <- err
		t.Fatalf("Run returned before an election: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not elected within 10s")
	}
	relay.Stall()
	if err := e.Healthy(tolerance); err != nil {
		t.Fatalf("just elected: %v, want healthy", err)
	}
	var unhealthy time.Time
	waitFor(t, 10*ttl, "the health check to fail", func() bool {
		if e.Healthy(tolerance) != nil {
			unhealthy = time.Now()
			return true
		}
		return false
	})
	err = e.Healthy(tolerance)
	if !errors.Is(err, election.ErrPastDeadline) {
		t.Fatalf("Healthy: %v, want ErrPastDeadline", err)
	}
	code, body := probe(t, h)
	t.Logf("unhealthy %v after the election (TTL %v, tolerance %v): %d %s", unhealthy.Sub(elected), ttl, tolerance, code, strings.TrimSpace(body))
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "past the deadline") {
		t.Errorf("probe while wedged: %d %q, want 503 with the reason", code, body)
	}
	// The deadline is at most TTL after the last renewal, which was sent
	// no earlier than the election; the check fails only past it plus the
	// tolerance, and never before the TTL minus one renewal interval.
	if d := unhealthy.Sub(elected); d < ttl-renew+tolerance {
		t.Errorf("unhealthy %v after the election, before the deadline could have passed (TTL %v - renew %v + tolerance %v)", d, ttl, renew, tolerance)
	}
	if e.IsLeader() {
		t.Error("IsLeader true past the deadline")
	}

	release()
	select {
	case r := <-demoted:
		if r != election.ReasonUnreachable && r != election.ReasonDeadlinePassed {
			t.Errorf("demoted for %v, want unreachable or deadline passed", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("not demoted within 10s of the callback's return")
	}
	if err := e.Healthy(tolerance); err != nil {
		t.Errorf("after Run dropped the term: %v, want healthy", err)
	}
	if code, body := probe(t, h); code != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Errorf("probe after recovery: %d %q, want 200 ok", code, body)
	}
	if err := e.Healthy(-time.Second); !errors.Is(err, election.ErrInvalidConfig) {
		t.Errorf("negative tolerance: %v, want ErrInvalidConfig", err)
	}
}
