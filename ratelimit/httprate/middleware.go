package httprate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/ratelimit"
)

// defaultTimeout bounds each decision when Config.Timeout is zero, as its
// doc states.
const defaultTimeout = 100 * time.Millisecond

// ErrInvalidConfig is returned by New for a Config that cannot work.
var ErrInvalidConfig = errors.New("httprate: invalid config")

// A Limiter decides for the middleware: a *ratelimit.Limiter, or in a
// handler's unit tests the in-memory *ratelimittest.Limiter, which decides
// as the Redis one does with no server. The middleware calls Allow, or
// AllowN when Config.Cost is set.
type Limiter interface {
	Allow(ctx context.Context, key string, r ratelimit.Rule) (ratelimit.Result, error)
	AllowN(ctx context.Context, key string, r ratelimit.Rule, n int) (ratelimit.Result, error)
}

// Config configures the middleware. Limiter, Policy and Key are required;
// every other field has a working zero value.
type Config struct {
	// Limiter decides: a *ratelimit.Limiter (ratelimit.New), or a
	// *ratelimittest.Limiter in tests. A nil one, typed nil pointers
	// included, is ErrInvalidConfig.
	Limiter Limiter
	// Policy is checked for every request; limit names become the policy
	// identifiers in the headers. A limit's state is named after the key and
	// the limit's parameters, not its name: two middlewares (two routes)
	// whose policies share a limit share its count for a key unless their
	// Key functions tell the routes apart (see the per-route example).
	Policy ratelimit.Policy
	// Key maps a request to the key it is limited by, such as a client IP
	// (see ClientIP), an API key or a user id. An error answers 500.
	Key func(*http.Request) (string, error)
	// Cost, if set, says how many requests one request counts for, such as
	// the rows of a batch: it is admitted for all of them or refused
	// (Limiter.AllowN). Nil counts 1. An error, a cost below 1, or one above
	// what a limit can ever admit at once (its Burst) answers 500: refuse
	// such requests in Cost's caller or clamp the cost.
	Cost func(*http.Request) (int, error)
	// Skip, if set, exempts the requests it returns true for (health
	// checks, internal callers): they are served with no call to Redis, no
	// rate-limit headers and no report to Hook.
	Skip func(*http.Request) bool
	// Limited, if set, writes the response to a rejected request instead of
	// the default 429 application/problem+json body. The rate-limit headers
	// and Retry-After are already set on w when it runs; it writes the
	// status (429 unless it knows better) and the body. res is the
	// limiter's answer: res.Limit is the limit that bound.
	Limited func(w http.ResponseWriter, r *http.Request, res ratelimit.Result)
	// LegacyHeaders, if set, adds the X-RateLimit-Limit, -Remaining and
	// -Reset headers that many clients and gateways still read to every
	// decided response, and says how Reset is written:
	//
	//   - "seconds": the seconds until the binding limit is back to its
	//     quota, rounded up, like the RateLimit field's t (the form of the
	//     draft's early RateLimit-Reset);
	//   - "unix": the Unix time, in seconds rounded up, at which the binding
	//     limit is back to its quota (the form of GitHub's API,
	//     ulule/limiter and go-chi/httprate), from this server's clock.
	//
	// They describe the binding limit (ratelimit.Result.Limit) only: Limit
	// is its q, Remaining its r (see the package documentation). Empty, the
	// default, sends only the RateLimit-Policy and RateLimit fields; any
	// other value is ErrInvalidConfig.
	LegacyHeaders string
	// Timeout bounds the Redis call of one decision. Zero means 100ms.
	Timeout time.Duration
	// FailClosed answers 503 Service Unavailable when Redis fails or times
	// out. The zero value fails open: the request is served unmetered.
	FailClosed bool
	// Hook, if set, is told about every request that is not skipped, with
	// the request's context, before its response is written: allowed,
	// rejected, served unmetered (failed open), refused with 503 (failed
	// closed) or refused with 500 (not metered), and for the last three the
	// error in Event.Err. It runs on the request's goroutine: keep it
	// short. A metrics adapter plugs in here (module telemetry's
	// HTTPRate).
	Hook func(ctx context.Context, e Event)
	// Logger, if set, receives a record for each request served unmetered
	// or refused with 503 (level Warn) and each that could not be metered
	// (level Error). Rejections are not logged: they are the limiter
	// working. Nil logs nothing.
	Logger *slog.Logger
}

// Middleware rate-limits the handlers it wraps.
type Middleware struct {
	cfg    Config
	policy string // RateLimit-Policy value, the same on every response
}

// New validates cfg and returns the middleware.
func New(cfg Config) (*Middleware, error) {
	switch {
	case luascripts.IsNil(cfg.Limiter):
		return nil, fmt.Errorf("%w: no Limiter", ErrInvalidConfig)
	case len(cfg.Policy) == 0:
		return nil, fmt.Errorf("%w: empty Policy", ErrInvalidConfig)
	case cfg.Key == nil:
		return nil, fmt.Errorf("%w: no Key function", ErrInvalidConfig)
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("%w: negative Timeout", ErrInvalidConfig)
	case cfg.LegacyHeaders != "" && cfg.LegacyHeaders != legacySeconds && cfg.LegacyHeaders != legacyUnix:
		return nil, fmt.Errorf("%w: LegacyHeaders %q (want \"seconds\", \"unix\" or empty)", ErrInvalidConfig, cfg.LegacyHeaders)
	}
	if err := cfg.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = defaultTimeout
	}
	return &Middleware{cfg: cfg, policy: policyField(cfg.Policy)}, nil
}

// Handler wraps next.
func (m *Middleware) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.cfg.Skip != nil && m.cfg.Skip(r) {
			next.ServeHTTP(w, r)
			return
		}
		e := m.decide(r)
		m.observe(r.Context(), &e)
		switch e.Outcome {
		case outcomeError:
			problem(w, http.StatusInternalServerError, "Internal Server Error", "the request could not be metered")
		case outcomeFailedClosed:
			w.Header().Set("Retry-After", "1")
			problem(w, http.StatusServiceUnavailable, "Service Unavailable", "the rate limiter cannot decide right now")
		case outcomeFailedOpen:
			next.ServeHTTP(w, r)
		case outcomeAllowed:
			m.setFields(w.Header(), e.Result)
			next.ServeHTTP(w, r)
		case outcomeRejected:
			h := w.Header()
			m.setFields(h, e.Result)
			h.Set("Retry-After", strconv.FormatInt(seconds(e.Result.RetryAfter), 10))
			if m.cfg.Limited != nil {
				m.cfg.Limited(w, r, e.Result)
				return
			}
			problem(w, http.StatusTooManyRequests, "Too Many Requests",
				fmt.Sprintf("rate limit %q exceeded; retry after %v", e.Result.Limit.Name(), e.Result.RetryAfter))
		}
	})
}

// decide asks the limiter about r.
func (m *Middleware) decide(r *http.Request) Event {
	key, err := m.cfg.Key(r)
	if err != nil {
		return Event{Outcome: outcomeError, Request: r, Err: err}
	}
	cost := 1
	if m.cfg.Cost != nil {
		if cost, err = m.cfg.Cost(r); err != nil {
			return Event{Outcome: outcomeError, Request: r, Key: key, Err: err}
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), m.cfg.Timeout)
	start := time.Now()
	var res ratelimit.Result
	if m.cfg.Cost == nil {
		res, err = m.cfg.Limiter.Allow(ctx, key, m.cfg.Policy)
	} else {
		res, err = m.cfg.Limiter.AllowN(ctx, key, m.cfg.Policy, cost)
	}
	e := Event{Request: r, Key: key, Cost: cost, Latency: time.Since(start), Err: err}
	cancel()
	switch {
	case err == nil && res.Allowed:
		e.Outcome, e.Result = outcomeAllowed, res
	case err == nil:
		e.Outcome, e.Result = outcomeRejected, res
	case refused(err):
		// Not an outage: the request itself cannot be metered (an empty
		// key, a cost no limit can admit). Serving it would let a client
		// opt out of the limit by sending what maps to no key.
		e.Outcome = outcomeError
	case m.cfg.FailClosed:
		e.Outcome = outcomeFailedClosed
	default:
		e.Outcome = outcomeFailedOpen
	}
	return e
}

// setFields sets the rate-limit headers of a decided request.
func (m *Middleware) setFields(h http.Header, res ratelimit.Result) {
	h.Set("RateLimit-Policy", m.policy)
	h.Set("RateLimit", field(res))
	if m.cfg.LegacyHeaders != "" {
		setLegacy(h, m.cfg.LegacyHeaders, res, time.Now())
	}
}

// refused reports whether the limiter rejected its input, as opposed to
// Redis failing to answer: only the latter is what FailClosed is about.
func refused(err error) bool {
	return errors.Is(err, ratelimit.ErrInvalidKey) || errors.Is(err, ratelimit.ErrInvalidN) ||
		errors.Is(err, ratelimit.ErrInvalidLimit)
}

// problem writes an RFC 9457 problem details body.
func problem(w http.ResponseWriter, status int, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}{"about:blank", title, status, detail})
}
