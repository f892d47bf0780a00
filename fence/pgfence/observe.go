package pgfence

import (
	"context"
	"fmt"
	"log/slog"
)

// Decision is the verdict on one fenced write, given to the hook set with
// WithHook. A call that failed before a verdict (bad input, a missing row,
// a database or serialization error) has none.
type Decision struct {
	Op       string // "update" (Store.Update, Table.Update, Table.UpdateSQL) or "guard" (Guard, GuardSQL)
	Table    string // the table compared against, quoted: the rows, the caller's table, or the marks
	ID       string // the row id, or the resource name for a guard
	Token    int64  // the token the write carried
	Accepted bool   // the write may proceed; false when it was refused as stale
	Highest  int64  // when refused, the highest token accepted before it; 0 when accepted
}

// observer is what WithHook and WithLogger set; the zero value observes
// nothing and costs a nil check per write.
type observer struct {
	hook   func(context.Context, Decision)
	logger *slog.Logger
}

// WithHook calls hook with every verdict of Update, Table.Update, Guard
// and their database/sql doors, accepted or refused, in the caller's
// goroutine, before the call returns. An accepted verdict inside the
// caller's transaction is final only once that transaction commits. Keep
// hook fast. It must not be nil.
func WithHook(hook func(ctx context.Context, d Decision)) Option {
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

// observe reports a verdict to the hook and the logger, if set. err is
// nil or the *StaleError of a refusal.
func (o *observer) observe(ctx context.Context, op, table, id string, token int64, err error) {
	if o == nil || (o.hook == nil && o.logger == nil) {
		return
	}
	d := Decision{Op: op, Table: table, ID: id, Token: token, Accepted: err == nil}
	if se, ok := err.(*StaleError); ok {
		d.Highest = se.Highest
	}
	if o.hook != nil {
		o.hook(ctx, d)
	}
	if o.logger != nil && !d.Accepted {
		o.logger.LogAttrs(ctx, slog.LevelWarn, "pgfence: stale write refused",
			slog.String("op", op), slog.String("table", table), slog.String("id", id),
			slog.Int64("token", token), slog.Int64("highest", d.Highest))
	}
}
