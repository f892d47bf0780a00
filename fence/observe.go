package fence

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// The operations and outcomes an Event reports, as its Op and Outcome say
// them: strings, the words a metrics or tracing adapter records, listed
// once, in Event's doc.
const (
	opSet  = "set"
	opHSet = "hset"
	opEval = "eval"

	outcomeAccepted = "accepted"
	outcomeStale    = "stale"
	outcomeError    = "error"
)

// Event is one fenced write, given to the hook set with WithHook: its
// verdict, or its error. Bad input (a token below 1, a bad key), returned
// before any round trip, is not reported. The shape is the one every
// primitive of this project reports with (lock.Event, and the others').
type Event struct {
	// Op is the write: "set" (Set), "hset" (HSet) or "eval" (Eval).
	Op string
	// Outcome is its verdict:
	//
	//   - "accepted": the token passed and the write ran;
	//   - "stale": the token was below the mark's highest, and nothing was
	//     written; Highest says the mark;
	//   - "error": the write failed without a verdict (the network, the
	//     server, a context that ended, an Eval script's error); Err says
	//     why. The write may have run all the same (see the package doc).
	Outcome string
	// Key is the key written; for Eval, keys[0].
	Key string
	// Token is the token the write carried.
	Token int64
	// Highest is, for "stale", the highest token accepted before the
	// write (> Token); 0 otherwise.
	Highest int64
	// Latency is how long the write took: one round trip, or the wait for
	// a batch (WithBatching) and its round trip.
	Latency time.Duration
	// Err is the error the write returned, for "error" and (the
	// *StaleError) "stale"; nil when accepted.
	Err error
}

// observer is what WithHook and WithLogger set; the zero value observes
// nothing and costs a nil check per write.
type observer struct {
	hook   func(context.Context, Event)
	logger *slog.Logger
}

// WithHook calls hook with every write's verdict, accepted or refused,
// and every write that failed without one, in the goroutine of the write,
// before the write returns. Keep it fast: it adds to every write's latency. A refused write
// is the event that shows fencing at work (a stale holder kept out); a
// metrics or tracing adapter counts it here. hook must not be nil.
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
// the key, the token and the highest token accepted. Nothing else is
// logged, and nothing at all without this option. logger must not be nil.
func WithLogger(logger *slog.Logger) Option {
	return func(c *config) error {
		if logger == nil {
			return fmt.Errorf("%w: nil logger", ErrInvalidOption)
		}
		c.logger = logger
		return nil
	}
}

// on reports whether anyone observes: writes skip reading the clock and
// building an Event when not.
func (o *observer) on() bool { return o.hook != nil || o.logger != nil }

// observe reports e to the hook and the logger, if set.
func (o *observer) observe(ctx context.Context, e Event) {
	if o.hook != nil {
		o.hook(ctx, e)
	}
	if o.logger != nil && e.Outcome == outcomeStale {
		o.logger.LogAttrs(ctx, slog.LevelWarn, "fence: stale write refused",
			slog.String("op", string(e.Op)), slog.String("key", e.Key),
			slog.Int64("token", e.Token), slog.Int64("highest", e.Highest))
	}
}
