package httprate

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/redis-primitives/go/ratelimit"
)

// The outcomes an Event reports, as its Outcome says them: strings, the
// words a metrics adapter records, listed once, in Event's doc.
const (
	outcomeAllowed      = "allowed"
	outcomeRejected     = "rejected"
	outcomeFailedOpen   = "failed_open"
	outcomeFailedClosed = "failed_closed"
	outcomeError        = "error"
)

// Event is what Config.Hook is told about one request that is not
// skipped, with the request's context.
type Event struct {
	// Outcome is what the middleware did with the request:
	//
	//   - "allowed": the limiter admitted the request; it was served;
	//   - "rejected": a limit was spent; the request got 429 (or what
	//     Config.Limited wrote);
	//   - "failed_open": the limiter could not decide (Redis failed or timed
	//     out) and Config.FailClosed is false: the request was served
	//     unmetered;
	//   - "failed_closed": the limiter could not decide and
	//     Config.FailClosed is true: the request got 503;
	//   - "error": the request could not be metered (the key or cost
	//     function failed, or the limiter refused the key or cost as
	//     input): it got 500, whatever Config.FailClosed says.
	Outcome string
	// Request is the request decided on, for its method, route or
	// headers.
	Request *http.Request
	// Key is what Config.Key returned; empty when it failed.
	Key string
	// Cost is how many requests the request counted for (1 without
	// Config.Cost); 0 when the cost function was not reached or failed.
	Cost int
	// Result is the limiter's answer, for "allowed" and
	// "rejected": Result.Limit is the binding limit (its Name is the
	// policy identifier in the headers) and Result.Remaining what it has
	// left. Zero otherwise.
	Result ratelimit.Result
	// Latency is how long the limiter's call took, zero when it was not
	// made.
	Latency time.Duration
	// Err is why the request was not decided, for "failed_open",
	// "failed_closed" and "error"; nil otherwise.
	Err error
}

// observe tells the hook and the logger about e.
func (m *Middleware) observe(ctx context.Context, e *Event) {
	if m.cfg.Hook != nil {
		m.cfg.Hook(ctx, *e)
	}
	if m.cfg.Logger == nil {
		return
	}
	var (
		level = slog.LevelWarn
		msg   string
	)
	switch e.Outcome {
	case outcomeFailedOpen:
		msg = "httprate: rate limiter unavailable, serving the request unmetered"
	case outcomeFailedClosed:
		msg = "httprate: rate limiter unavailable, refusing the request with 503"
	case outcomeError:
		level, msg = slog.LevelError, "httprate: request could not be metered, refused with 500"
	default:
		return // decisions are the limiter working: not an operator's event
	}
	r := e.Request
	m.cfg.Logger.LogAttrs(ctx, level, msg,
		slog.String("outcome", string(e.Outcome)),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Duration("latency", e.Latency),
		slog.Any("error", e.Err))
}
