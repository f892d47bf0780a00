package httpsem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/redis-primitives/go/semaphore"
)

// The values of Config's zero durations, as its fields' docs state them.
const (
	defaultTTL        = 30 * time.Second
	defaultTimeout    = 100 * time.Millisecond
	defaultRetryAfter = time.Second
)

// ErrInvalidConfig is returned by New for a Config that cannot work.
var ErrInvalidConfig = errors.New("httpsem: invalid config")

// Config configures the middleware. Issuer, Key and Capacity are required;
// every other field has a working zero value.
type Config struct {
	Issuer *semaphore.Issuer
	// Key maps a request to the semaphore it counts against (a client IP,
	// an API key, a tenant, a route). An error answers 500.
	Key func(*http.Request) (string, error)
	// Capacity is how many requests of one key may be in flight at once.
	Capacity int
	// TTL is each permit's lease, renewed every third of it while the
	// handler runs: the longest a crashed process keeps a place. Zero
	// means 30s.
	TTL time.Duration
	// Timeout bounds the acquire of one request. Zero means 100ms. It must
	// be shorter than TTL.
	Timeout time.Duration
	// RetryAfter is the Retry-After of a refused request, rounded up to
	// whole seconds. Zero means 1s.
	RetryAfter time.Duration
	// FailClosed answers 503 Service Unavailable, with Retry-After: 1, when
	// Redis fails or times out. The zero value fails open: the request is
	// served without a permit.
	FailClosed bool
	// Skip, if set, exempts the requests it returns true for: served with
	// no call to Redis and no report to Hook.
	Skip func(*http.Request) bool
	// Full, if set, writes the response to a request refused for lack of a
	// place, instead of the default 429 problem+json body. Retry-After is
	// already set on w.
	Full func(w http.ResponseWriter, r *http.Request, full *semaphore.FullError)
	// Hook, if set, is told about every request that is not skipped, with
	// the request's context, before its handler runs or its refusal is
	// written: admitted, refused with 429 (full), served without a permit
	// (failed open), refused with 503 (failed closed) or refused with 500
	// (not counted), and for the last four the error in Event.Err. It runs
	// on the request's goroutine: keep it short. A metrics adapter plugs in
	// here (module telemetry's HTTPSem).
	Hook func(ctx context.Context, e Event)
}

// Middleware limits the requests in flight of the handlers it wraps.
type Middleware struct{ cfg Config }

// New validates cfg and returns the middleware.
func New(cfg Config) (*Middleware, error) {
	switch {
	case cfg.Issuer == nil:
		return nil, fmt.Errorf("%w: no Issuer", ErrInvalidConfig)
	case cfg.Key == nil:
		return nil, fmt.Errorf("%w: no Key function", ErrInvalidConfig)
	case cfg.Capacity < 1:
		return nil, fmt.Errorf("%w: Capacity %d (want ≥ 1)", ErrInvalidConfig, cfg.Capacity)
	case cfg.TTL < 0 || (cfg.TTL > 0 && cfg.TTL < 10*time.Millisecond):
		return nil, fmt.Errorf("%w: TTL %v (want ≥ 10ms, or 0 for %v)", ErrInvalidConfig, cfg.TTL, defaultTTL)
	case cfg.Timeout < 0, cfg.RetryAfter < 0:
		return nil, fmt.Errorf("%w: negative Timeout or RetryAfter", ErrInvalidConfig)
	}
	cfg.TTL = orDefault(cfg.TTL, defaultTTL)
	cfg.Timeout = orDefault(cfg.Timeout, defaultTimeout)
	cfg.RetryAfter = orDefault(cfg.RetryAfter, defaultRetryAfter)
	// The permit's renewals start when its acquire returns: an acquire
	// allowed to take a whole TTL could hand the request a permit that has
	// already expired, and another request its place.
	if cfg.Timeout >= cfg.TTL {
		return nil, fmt.Errorf("%w: Timeout %v is not shorter than the permit's TTL %v", ErrInvalidConfig, cfg.Timeout, cfg.TTL)
	}
	return &Middleware{cfg: cfg}, nil
}

// orDefault returns d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Handler wraps next.
func (m *Middleware) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.cfg.Skip != nil && m.cfg.Skip(r) {
			next.ServeHTTP(w, r)
			return
		}
		e, permit := m.acquire(r)
		if m.cfg.Hook != nil {
			m.cfg.Hook(r.Context(), e)
		}
		switch e.Outcome {
		case outcomeError:
			writeProblem(w, http.StatusInternalServerError, "the request could not be counted")
		case outcomeFailedClosed:
			w.Header().Set("Retry-After", "1")
			writeProblem(w, http.StatusServiceUnavailable, "the concurrency limiter cannot decide right now")
		case outcomeFailedOpen:
			next.ServeHTTP(w, r)
		case outcomeFull:
			w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(m.cfg.RetryAfter.Seconds())), 10))
			var full *semaphore.FullError
			errors.As(e.Err, &full)
			if m.cfg.Full != nil {
				m.cfg.Full(w, r, full)
				return
			}
			writeProblem(w, http.StatusTooManyRequests, fmt.Sprintf("requests of this key already in flight: %d", full.Holders))
		case outcomeAdmitted:
			m.serve(w, r, next, permit)
		}
	})
}

// serve runs next under permit: renewed while it runs, released when it
// returns or panics, and its request context cancelled if the permit is
// lost.
func (m *Middleware) serve(w http.ResponseWriter, r *http.Request, next http.Handler, permit *semaphore.Permit) {
	sem := m.cfg.Issuer
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), m.cfg.Timeout)
		defer cancel()
		_, _ = sem.Release(ctx, permit)
	}()
	k, err := sem.Keep(r.Context(), permit, permit.TTL/3)
	if err != nil { // the TTL is validated by New: not reached
		writeProblem(w, http.StatusInternalServerError, "the request could not be counted")
		return
	}
	defer func() { _ = k.Stop() }()
	next.ServeHTTP(w, r.WithContext(k.Context()))
}

// acquire takes a permit for r, or says why not.
func (m *Middleware) acquire(r *http.Request) (Event, *semaphore.Permit) {
	key, err := m.cfg.Key(r)
	if err != nil {
		return Event{Outcome: outcomeError, Request: r, Err: err}, nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), m.cfg.Timeout)
	defer cancel()
	start := time.Now()
	p, err := m.cfg.Issuer.Acquire(ctx, key, m.cfg.Capacity, m.cfg.TTL)
	e := Event{Outcome: outcomeAdmitted, Request: r, Key: key, Latency: time.Since(start), Err: err}
	var full *semaphore.FullError
	switch {
	case err == nil:
		e.Token = p.Token
	case errors.As(err, &full):
		e.Outcome, e.InFlight = outcomeFull, full.Holders
	case errors.Is(err, semaphore.ErrInvalidName):
		e.Outcome = outcomeError // an empty key is no outage: serving it would let a client opt out
	case m.cfg.FailClosed:
		e.Outcome = outcomeFailedClosed
	default:
		e.Outcome = outcomeFailedOpen
	}
	return e, p
}

// writeProblem writes an RFC 9457 problem details body whose title is the
// status text.
func writeProblem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type": "about:blank", "title": http.StatusText(status), "status": status, "detail": detail,
	})
}
