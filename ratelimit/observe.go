package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Op names what a Limiter did, in an Event.
type Op string

// The operations an Event reports.
const (
	// OpAllow is Allow and AllowN, and each attempt of Wait and WaitN.
	OpAllow Op = "allow"
	// OpWait is a whole Wait or WaitN call, reported when it returns.
	OpWait Op = "wait"
	// OpTake is Take.
	OpTake Op = "take"
	// OpPeek is Peek.
	OpPeek Op = "peek"
	// OpReserve is Reserve.
	OpReserve Op = "reserve"
	// OpCommit is Reservation.Commit.
	OpCommit Op = "commit"
	// OpCancel is Reservation.Cancel.
	OpCancel Op = "cancel"
)

// Outcome is how an operation ended, in an Event.
type Outcome string

// The outcomes an Event reports, by Op:
//
//   - OpAllow, OpTake, OpReserve: OutcomeAllowed (admitted; for Take, at
//     least one of n), OutcomeRejected or OutcomeError.
//   - OpWait: OutcomeAllowed (admitted, after any waits) or OutcomeError
//     (an attempt got no answer, or the context ended or its deadline
//     would pass before the next attempt; Err says which).
//   - OpPeek: OutcomeAllowed (one request would be admitted now),
//     OutcomeRejected or OutcomeError.
//   - OpCommit: OutcomeAllowed (actual charged in full), OutcomeRejected
//     (an actual above the reservation's Amount did not fit in full;
//     Granted is what was charged), OutcomeExpired, OutcomeSettled or
//     OutcomeError.
//   - OpCancel: OutcomeAllowed (given back), OutcomeSettled or
//     OutcomeError.
const (
	OutcomeAllowed  Outcome = "allowed"
	OutcomeRejected Outcome = "rejected"
	// OutcomeExpired: a Commit the server refused because the reservation
	// had passed its expiry and been given back (Err matches ErrExpired).
	OutcomeExpired Outcome = "expired"
	// OutcomeSettled: a Commit or Cancel the server refused because the
	// reservation had been settled the other way first (Err matches
	// ErrSettled). A Commit or Cancel of a Reservation this process knows
	// to be settled returns ErrSettled without a round trip and is not
	// reported.
	OutcomeSettled Outcome = "settled"
	// OutcomeError: the call got no answer from Redis (a network or script
	// error, a context that ended); Err says why.
	OutcomeError Outcome = "error"
)

// Event is one decision of a Limiter, given to the hook set with WithHook:
// every Allow, AllowN, Take, Peek, Reserve, Commit and Cancel (and each
// attempt of Wait and WaitN), answered by Redis or, with WithDenyCache, by
// the cache (Cached); and each whole Wait and WaitN (OpWait). Bad input
// (an empty key, an invalid limit, n or ttl) is returned before any
// decision and is not reported; nor is Reset, which decides nothing.
type Event struct {
	Op      Op
	Outcome Outcome
	// Key is the caller's key, before the prefix.
	Key string
	// Limit, Granted, Remaining and RetryAfter are the Result's: Limit is
	// the binding limit (for a Policy, the one that decided). For
	// OutcomeError, OutcomeExpired and OutcomeSettled they are zero, but
	// Limit is the rule's when the rule is a single Limit. For OpWait they
	// are the Result the call returned: its last attempt's (a rejection,
	// when the context ended the wait).
	Limit      Limit
	Granted    int
	Remaining  int
	RetryAfter time.Duration
	// Cached reports an answer from the deny cache (WithDenyCache), given
	// without a round trip: a rejection, as the server would give it.
	Cached bool
	// Latency is how long the call took, its one round trip included; 0
	// for an answer from the deny cache. For OpWait, the whole call,
	// attempts and waits.
	Latency time.Duration
	// Err is the error the call returned: for OutcomeError, OutcomeExpired
	// and OutcomeSettled; nil otherwise.
	Err error
}

// observer is what WithHook and WithLogger set; the zero value observes
// nothing and costs a nil check per call.
type observer struct {
	hook   func(context.Context, Event)
	logger *slog.Logger
}

// WithHook calls hook with every decision, allowed, rejected or failed, in
// the caller's goroutine, after the round trip and before the call
// returns. Keep it fast: it adds to every call's latency. A metrics or
// tracing adapter plugs in here. hook must not be nil.
func WithHook(hook func(ctx context.Context, e Event)) Option {
	return func(c *config) error {
		if hook == nil {
			return fmt.Errorf("%w: nil hook", ErrInvalidOption)
		}
		c.hook = hook
		return nil
	}
}

// WithLogger logs, at level Warn, each call that failed to get a decision
// from Redis (the caller must then fail open or closed; OutcomeError), and
// each Commit or Cancel the server refused (OutcomeExpired,
// OutcomeSettled); rejections are the limiter working and are not logged.
// Nothing is logged without this option. logger must not be nil.
func WithLogger(logger *slog.Logger) Option {
	return func(c *config) error {
		if logger == nil {
			return fmt.Errorf("%w: nil logger", ErrInvalidOption)
		}
		c.logger = logger
		return nil
	}
}

// outcome is how a call that returned res and err ended.
func outcome(res Result, err error) Outcome {
	switch {
	case errors.Is(err, ErrExpired):
		return OutcomeExpired
	case errors.Is(err, ErrSettled):
		return OutcomeSettled
	case err != nil:
		return OutcomeError
	case res.Allowed:
		return OutcomeAllowed
	}
	return OutcomeRejected
}

// report gives a decision to the hook and, when it failed, the logger. A
// Reset is not a decision and is not reported.
func (l *Limiter) report(ctx context.Context, m mode, key string, r Rule, res Result, err error, latency time.Duration, cached bool) {
	o := &l.cfg.observer
	if o.hook == nil && o.logger == nil || m == modeReset {
		return
	}
	if o.hook != nil {
		e := Event{
			Op: Op(m), Outcome: outcome(res, err), Key: key, Limit: res.Limit, Granted: res.Granted,
			Remaining: res.Remaining, RetryAfter: res.RetryAfter, Cached: cached, Latency: latency, Err: err,
		}
		if lim, ok := r.(Limit); ok && err != nil {
			e.Limit = lim
		}
		o.hook(ctx, e)
	}
	if o.logger != nil && err != nil {
		o.logger.LogAttrs(ctx, slog.LevelWarn, "ratelimit: no decision",
			slog.String("op", string(m)), slog.String("key", key), slog.String("error", err.Error()))
	}
}

// reportWait gives a whole Wait or WaitN call to the hook. The logger has
// logged its attempts that got no answer already; a wait its context ended
// is the caller's choice, not an operator's event.
func (l *Limiter) reportWait(ctx context.Context, key string, r Rule, res Result, err error, latency time.Duration) {
	e := Event{
		Op: OpWait, Outcome: OutcomeAllowed, Key: key, Limit: res.Limit, Granted: res.Granted,
		Remaining: res.Remaining, RetryAfter: res.RetryAfter, Latency: latency, Err: err,
	}
	if err != nil {
		e.Outcome = OutcomeError
	}
	if lim, ok := r.(Limit); ok && e.Limit == (Limit{}) {
		e.Limit = lim
	}
	l.cfg.hook(ctx, e)
}
