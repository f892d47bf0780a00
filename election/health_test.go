package election_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// probe returns the handler's status and body.
func probe(t *testing.T, h http.Handler) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	return rec.Code, rec.Body.String()
}

// A node wedged while it holds a term (here Run is stuck in a Hook that
// blocks on "elected" while Redis stops answering its renewals) keeps the term past
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
	cfg.Hook = func(_ context.Context, e election.Event) {
		switch e.Op {
		case "elected":
			entered <- time.Now()
			<-unblock // a hook that blocks, against the Hook's rule
		case "demoted":
			demoted <- e.Reason
		}
	}
	e, err := election.New(goredisadapter.New(c), cfg)
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

// syncBuffer is a bytes.Buffer safe for a logger on Run's goroutine and the
// test reading it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitUnhealthy polls e.Healthy(tolerance) until it fails, and returns when.
func waitUnhealthy(t *testing.T, e *election.Elector, within, tolerance time.Duration) time.Time {
	t.Helper()
	var at time.Time
	waitFor(t, within, "the health check to fail", func() bool {
		if e.Healthy(tolerance) != nil {
			at = time.Now()
			return true
		}
		return false
	})
	return at
}

const reachTTL, reachRetry, reachTolerance = 400 * time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond

// A node whose password is wrong is refused by Redis on its first attempt:
// Run returns the error (no retry can fix it), the Hook and the log are
// told, and the health check, which answered 200 "ok" for such a node,
// fails once the attempts have failed for TTL + RetryInterval + tolerance.
func TestNodeWithAWrongPasswordTurnsUnhealthyWithinTTLPlusRetryInterval(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	if err := client(t, s).Do(context.Background(), "ACL", "SETUSER", "app", "on", ">right", "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	c := client(t, s, func(o *redis.Options) { o.Username, o.Password = "app", "wrong" })
	var rec recorder
	var logged syncBuffer
	cfg := baseConfig(s, "wrongpass-health", "rotated", reachTTL, reachRetry)
	cfg.Hook = rec.hook()
	cfg.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	e, err := election.New(goredisadapter.New(c), cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := e.HealthHandler(reachTolerance)
	ctx, cancel := context.WithTimeout(context.Background(), 20*cfg.RetryInterval)
	defer cancel()
	start := time.Now()
	err = e.Run(ctx, nil)
	if ctx.Err() != nil || redisCode(err) != "WRONGPASS" {
		t.Fatalf("Run: %v, want the WRONGPASS refusal at once", err)
	}
	if f := rec.of("failed"); len(f) != 1 || !f[0].gaveUp || redisCode(f[0].err) != "WRONGPASS" {
		t.Errorf("failed attempts: %+v, want one with WRONGPASS that gave up", f)
	}
	if log := logged.String(); strings.Count(log, "level=WARN") != 1 || !strings.Contains(log, "WRONGPASS") {
		t.Errorf("log: %q, want one warning with the error", log)
	}
	bound := cfg.TTL + cfg.RetryInterval + reachTolerance
	if code, body := probe(t, h); time.Since(start) < bound && code != http.StatusOK {
		t.Errorf("probe before the bound: %d %q, want 200", code, body)
	}
	unhealthy := waitUnhealthy(t, e, 10*bound, reachTolerance)
	took := unhealthy.Sub(start)
	code, body := probe(t, h)
	t.Logf("wrong password: unhealthy %v after Run started (bound TTL %v + RetryInterval %v + tolerance %v = %v): %d %s",
		took.Round(time.Millisecond), cfg.TTL, cfg.RetryInterval, reachTolerance, bound, code, strings.TrimSpace(body))
	if err := e.Healthy(reachTolerance); !errors.Is(err, election.ErrUnreachable) || redisCode(err) != "WRONGPASS" {
		t.Errorf("Healthy: %v, want ErrUnreachable with the WRONGPASS refusal", err)
	}
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "WRONGPASS") {
		t.Errorf("probe: %d %q, want 503 with the refusal", code, body)
	}
	// Not before the bound (the attempt was sent after start), and within
	// one retry interval of it: the check reads the clock, it does not wait
	// for an attempt.
	if took < bound || took > bound+cfg.RetryInterval {
		t.Errorf("unhealthy %v after the start, want within [%v, %v]", took, bound, bound+cfg.RetryInterval)
	}
}

// A node that cannot reach Redis (killed before the node starts) retries
// every RetryInterval: each failed attempt reaches the log and the
// Hook, the health check fails once Redis has answered none of them for
// TTL + RetryInterval + tolerance, whether or not an attempt has returned
// by then, and passes again once Redis is back and the node leads.
func TestNodeThatCannotReachRedisReportsEveryAttemptAndTurnsUnhealthyUntilRedisIsBack(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c := client(t, s)
	s.Kill(t)
	var logged syncBuffer
	cfg := baseConfig(s, "unreachable", "cut-off", reachTTL, reachRetry)
	cfg.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	start := time.Now()
	n := startNode(t, c, cfg, nil)
	bound := cfg.TTL + cfg.RetryInterval + reachTolerance
	unhealthy := waitUnhealthy(t, n.e, 10*bound, reachTolerance)
	took := unhealthy.Sub(start)
	t.Logf("unreachable: unhealthy %v after Run started (bound TTL %v + RetryInterval %v + tolerance %v = %v)",
		took.Round(time.Millisecond), cfg.TTL, cfg.RetryInterval, reachTolerance, bound)
	if took < bound || took > bound+cfg.RetryInterval {
		t.Errorf("unhealthy %v after the start, want within [%v, %v]", took, bound, bound+cfg.RetryInterval)
	}
	// Retried, each failure reported (go-redis' own dial retries make one
	// attempt last a while).
	n.rec.nth(t, 20*time.Second, "failed", 2)
	err := n.e.Healthy(reachTolerance)
	lines := strings.Count(logged.String(), "retrying")
	failures := n.rec.of("failed")
	attempts := len(failures)
	t.Logf("%d failed attempts reported, %d log lines, %v after the start: %v", attempts, lines, time.Since(start).Round(time.Millisecond), err)
	if !errors.Is(err, election.ErrUnreachable) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Healthy: %v, want ErrUnreachable with the refused connection", err)
	}
	for i, f := range failures {
		if f.gaveUp || !errors.Is(f.err, syscall.ECONNREFUSED) {
			t.Errorf("attempt %d: gave up %v, %v; want retried, a refused connection", i, f.gaveUp, f.err)
		}
	}
	if lines < attempts { // each is logged before the Hook is told
		t.Errorf("%d log lines for %d failed attempts:\n%s", lines, attempts, logged.String())
	}
	select {
	case err := <-n.done:
		n.done <- err
		t.Fatalf("Run returned on an unreachable server: %v", err)
	default:
	}

	s.Restart(t)
	n.rec.nth(t, 20*time.Second, "elected", 1)
	if err := n.e.Healthy(reachTolerance); err != nil {
		t.Errorf("leading after Redis came back: %v, want healthy", err)
	}
}

// A follower that gets answers stays healthy however long another node
// leads, and so does the leader.
func TestFollowerThatCanTalkToRedisStaysHealthyWhileAnotherLeads(t *testing.T) {
	s := redistest.Start(t)
	a := startNode(t, client(t, s), baseConfig(s, "healthy", "a", reachTTL, reachRetry), nil)
	a.rec.nth(t, 5*time.Second, "elected", 1)
	b := startNode(t, client(t, s), baseConfig(s, "healthy", "b", reachTTL, reachRetry), nil)
	b.rec.nth(t, 5*time.Second, "follower", 1)
	// Across three TTLs: every bound the check has, passed several times.
	for end := time.Now().Add(3 * reachTTL); time.Now().Before(end); time.Sleep(time.Millisecond) {
		for _, n := range []*node{a, b} {
			if err := n.e.Healthy(0); err != nil {
				t.Fatalf("node %s: %v, want healthy", n.e.NodeID(), err)
			}
		}
	}
}
