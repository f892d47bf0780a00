package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// The operations and outcomes an Event reports, as its Op and Outcome say
// them: strings, the words a metrics or tracing adapter records, listed
// once, in Event's doc.
const (
	opAllow   = "allow"
	opWait    = "wait"
	opTake    = "take"
	opPeek    = "peek"
	opReserve = "reserve"
	opCommit  = "commit"
	opCancel  = "cancel"
	opExtend  = "extend"

	outcomeAllowed  = "allowed"
	outcomeRejected = "rejected"
	outcomeExpired  = "expired"
	outcomeSettled  = "settled"
	outcomeError    = "error"
)

// Event is one decision of a Limiter, given to the hook set with WithHook:
// every Allow, AllowN, Take, Peek, Reserve, Commit, Cancel and Extend (and
// each attempt of Wait, WaitN and ReserveWait, and each extension of a
// Keeper), answered by Redis or, with WithDenyCache, by the cache (Cached);
// and each whole Wait, WaitN and ReserveWait ("wait"). Bad input
// (an empty key, an invalid limit, n or ttl) is returned before any
// decision and is not reported; nor is Reset, which decides nothing.
type Event struct {
	// Op is what the Limiter did: "allow" (Allow and AllowN, and each
	// attempt of Wait and WaitN), "wait" (a whole Wait, WaitN or
	// ReserveWait call, reported when it returns), "take" (Take), "peek"
	// (Peek), "reserve" (Reserve, and each attempt of ReserveWait),
	// "commit" (Reservation.Commit), "cancel" (Reservation.Cancel) or
	// "extend" (Reservation.Extend, and each extension of a Keeper).
	Op string
	// Outcome is how it ended, by Op:
	//
	//   - "allow", "take", "reserve": "allowed" (admitted; for Take, at
	//     least one of n), "rejected" or "error";
	//   - "wait": "allowed" (admitted, after any waits) or "error" (an
	//     attempt got no answer, or the context ended or its deadline
	//     would pass before the next attempt; Err says which);
	//   - "peek": "allowed" (one request would be admitted now),
	//     "rejected" or "error";
	//   - "commit": "allowed" (actual charged in full), "rejected" (an
	//     actual above the reservation's Amount did not fit in full;
	//     Granted is what was charged), "expired", "settled" or "error";
	//   - "cancel": "allowed" (given back), "settled" or "error";
	//   - "extend": "allowed" (extended), "expired", "settled" or "error".
	//
	// "expired": the server refused a Commit because the reservation had
	// passed its expiry and been given back (Err matches ErrExpired).
	// "settled": the server refused a Commit or Cancel because the
	// reservation had been settled the other way first (Err matches
	// ErrSettled); a Commit or Cancel of a Reservation this process knows
	// to be settled returns ErrSettled without a round trip and is not
	// reported. "error": the call got no answer from Redis (a network or
	// script error, a context that ended); Err says why.
	Outcome string
	// Key is the caller's key, before the prefix.
	Key string
	// Limit, Granted, Remaining and RetryAfter are the Result's: Limit is
	// the binding limit (for a Policy, the one that decided). For
	// "error", "expired" and "settled" they are zero, but
	// Limit is the rule's when the rule is a single Limit. For "wait" they
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
	// for an answer from the deny cache. For "wait", the whole call,
	// attempts and waits.
	Latency time.Duration
	// Err is the error the call returned: for "error", "expired"
	// and "settled"; nil otherwise.
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
// from Redis (the caller must then fail open or closed; "error"), and
// each Commit or Cancel the server refused ("expired",
// "settled"); rejections are the limiter working and are not logged.
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
func outcome(res Result, err error) string {
	switch {
	case errors.Is(err, ErrExpired):
		return outcomeExpired
	case errors.Is(err, ErrSettled):
		return outcomeSettled
	case err != nil:
		return outcomeError
	case res.Allowed:
		return outcomeAllowed
	}
	return outcomeRejected
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
			Op: string(m), Outcome: outcome(res, err), Key: key, Limit: res.Limit, Granted: res.Granted,
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

// reportWait gives a whole Wait, WaitN or ReserveWait call to the hook. The logger has
// logged its attempts that got no answer already; a wait its context ended
// is the caller's choice, not an operator's event.
func (l *Limiter) reportWait(ctx context.Context, key string, r Rule, res Result, err error, latency time.Duration) {
	e := Event{
		Op: opWait, Outcome: outcomeAllowed, Key: key, Limit: res.Limit, Granted: res.Granted,
		Remaining: res.Remaining, RetryAfter: res.RetryAfter, Latency: latency, Err: err,
	}
	if err != nil {
		e.Outcome = outcomeError
	}
	if lim, ok := r.(Limit); ok && e.Limit == (Limit{}) {
		e.Limit = lim
	}
	l.cfg.hook(ctx, e)
}
