package httprate

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/redis-primitives/go/ratelimit"
)

// An Outcome is what the middleware did with a request.
type Outcome int

const (
	// OutcomeAllowed: the limiter admitted the request; it was served.
	OutcomeAllowed Outcome = iota + 1
	// OutcomeRejected: a limit was spent; the request got 429 (or what
	// Config.Limited wrote).
	OutcomeRejected
	// OutcomeFailedOpen: the limiter could not decide (Redis failed or
	// timed out) and Config.Unavailable is FailOpen: the request was served
	// unmetered.
	OutcomeFailedOpen
	// OutcomeFailedClosed: the limiter could not decide and
	// Config.Unavailable is FailClosed: the request got 503.
	OutcomeFailedClosed
	// OutcomeError: the request could not be metered (the key or cost
	// function failed, or the limiter refused the key or cost as input): it
	// got 500, whatever Config.Unavailable says.
	OutcomeError
)

// String returns "allowed", "rejected", "failed_open", "failed_closed" or
// "error", for logs and metric attributes.
func (o Outcome) String() string {
	switch o {
	case OutcomeAllowed:
		return "allowed"
	case OutcomeRejected:
		return "rejected"
	case OutcomeFailedOpen:
		return "failed_open"
	case OutcomeFailedClosed:
		return "failed_closed"
	case OutcomeError:
		return "error"
	}
	return "unknown"
}

// A Decision is what Config.OnDecision is told about one request.
type Decision struct {
	Outcome Outcome
	// Key is what Config.Key returned; empty when it failed.
	Key string
	// Cost is how many requests the request counted for (1 without
	// Config.Cost); 0 when the cost function was not reached or failed.
	Cost int
	// Result is the limiter's answer, for OutcomeAllowed and
	// OutcomeRejected: Result.Limit is the binding limit (its Name is the
	// policy identifier in the headers) and Result.Remaining what it has
	// left. Zero otherwise.
	Result ratelimit.Result
	// Latency is how long the limiter's call took, zero when it was not
	// made.
	Latency time.Duration
	// Err is why the request was not decided, for OutcomeFailedOpen,
	// OutcomeFailedClosed and OutcomeError; nil otherwise.
	Err error
}

// observe tells the hooks and the logger about d.
func (m *Middleware) observe(r *http.Request, d *Decision) {
	if d.Err != nil && m.cfg.OnError != nil {
		m.cfg.OnError(r, d.Err)
	}
	if m.cfg.OnDecision != nil {
		m.cfg.OnDecision(r, *d)
	}
	if m.cfg.Logger == nil {
		return
	}
	var (
		level = slog.LevelWarn
		msg   string
	)
	switch d.Outcome {
	case OutcomeFailedOpen:
		msg = "httprate: rate limiter unavailable, serving the request unmetered"
	case OutcomeFailedClosed:
		msg = "httprate: rate limiter unavailable, refusing the request with 503"
	case OutcomeError:
		level, msg = slog.LevelError, "httprate: request could not be metered, refused with 500"
	default:
		return // decisions are the limiter working: not an operator's event
	}
	m.cfg.Logger.LogAttrs(r.Context(), level, msg,
		slog.String("outcome", d.Outcome.String()),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Duration("latency", d.Latency),
		slog.Any("error", d.Err))
}
