package pgfence

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
	opUpdate = "update"
	opGuard  = "guard"

	outcomeAccepted = "accepted"
	outcomeStale    = "stale"
	outcomeError    = "error"
)

// Event is one fenced write, given to the hook set with WithHook: its
// verdict, or its error. Bad input, returned before any statement, is not
// reported. The shape is the one every primitive of this project reports
// with (lock.Event, fence.Event and the others').
type Event struct {
	// Op is the write: "update" (Store.Update, Table.Update,
	// Table.UpdateSQL) or "guard" (Guard, GuardSQL).
	Op string
	// Outcome is its verdict:
	//
	//   - "accepted": the token passed; the write may proceed (final once
	//     the caller's transaction commits);
	//   - "stale": the token was below the highest; Highest says it;
	//   - "error": the call failed without a verdict (a missing row, the
	//     database's error, a context that ended); Err says why.
	Outcome string
	// Table is the table compared against, quoted: the rows, the caller's
	// table, or the marks.
	Table string
	// ID is the row id, or the resource name for a guard.
	ID string
	// Token is the token the write carried.
	Token int64
	// Highest is, for "stale", the highest token accepted before it;
	// 0 otherwise.
	Highest int64
	// Latency is how long the call took, its statements in the caller's
	// transaction.
	Latency time.Duration
	// Err is the error the call returned, for "error" and (the
	// *StaleError) "stale"; nil when accepted.
	Err error
}

// observer is what WithHook and WithLogger set; the zero value observes
// nothing and costs a nil check per write.
type observer struct {
	hook   func(context.Context, Event)
	logger *slog.Logger
}

// WithHook calls hook with every verdict of Update, Table.Update, Guard
// and their database/sql doors, accepted or refused, and every such call
// that failed without one, in the caller's goroutine, before the call
// returns. An accepted verdict inside the
// caller's transaction is final only once that transaction commits. Keep
// hook fast. It must not be nil.
func WithHook(hook func(ctx context.Context, e Event)) Option {
	return func(c *config) error {
		if hook == nil {
			return fmt.Errorf("%w: nil hook", ErrInvalidOption)
		}
		c.hook = hook
		return nil
	}
}

// WithLogger logs each refused stale write to logger, at level Warn, with
// the table, the id, the token and the highest token accepted. Nothing
// else is logged, and nothing at all without this option. logger must not
// be nil.
func WithLogger(logger *slog.Logger) Option {
	return func(c *config) error {
		if logger == nil {
			return fmt.Errorf("%w: nil logger", ErrInvalidOption)
		}
		c.logger = logger
		return nil
	}
}

// on reports whether anyone observes: calls skip reading the clock when
// not.
func (o *observer) on() bool { return o != nil && (o.hook != nil || o.logger != nil) }

// start returns the time a call starts at, when observed.
func (o *observer) start() time.Time {
	if o.on() {
		return time.Now()
	}
	return time.Time{}
}

// observe reports a call that started at start and returned err to the
// hook and the logger, if set.
func (o *observer) observe(ctx context.Context, op string, table, id string, token int64, start time.Time, err error) {
	if !o.on() {
		return
	}
	e := Event{Op: op, Outcome: outcomeAccepted, Table: table, ID: id, Token: token, Latency: time.Since(start), Err: err}
	var se *StaleError
	if errors.As(err, &se) {
		e.Outcome, e.Highest = outcomeStale, se.Highest
	} else if err != nil {
		e.Outcome = outcomeError
	}
	if o.hook != nil {
		o.hook(ctx, e)
	}
	if o.logger != nil && e.Outcome == outcomeStale {
		o.logger.LogAttrs(ctx, slog.LevelWarn, "pgfence: stale write refused",
			slog.String("op", string(op)), slog.String("table", table), slog.String("id", id),
			slog.Int64("token", token), slog.Int64("highest", e.Highest))
	}
}
