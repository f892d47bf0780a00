package fence

import (
	"context"
	"fmt"
	"log/slog"
)

// Decision is the verdict on one fenced write, given to the hook set with
// WithHook. A write that failed before a verdict (bad input, a network or
// script error) has none.
type Decision struct {
	Op       string // "set", "hset" or "eval"
	Key      string // the key written; for Eval, keys[0]
	Token    int64  // the token the write carried
	Accepted bool   // the write ran; false when it was refused as stale
	Highest  int64  // when refused, the highest token accepted before it (> Token); 0 when accepted
}

// observer is what WithHook and WithLogger set; the zero value observes
// nothing and costs a nil check per write.
type observer struct {
	hook   func(context.Context, Decision)
	logger *slog.Logger
}

// WithHook calls hook with every write's verdict, accepted or refused, in
// the goroutine of the write, after the verdict and before the write
// returns. Keep it fast: it adds to every write's latency. A refused write
// is the event that shows fencing at work (a stale holder kept out); a
// metrics or tracing adapter counts it here. hook must not be nil.
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

// observe reports a verdict to the hook and the logger, if set.
func (o *observer) observe(ctx context.Context, d Decision) {
	if o.hook != nil {
		o.hook(ctx, d)
	}
	if o.logger != nil && !d.Accepted {
		o.logger.LogAttrs(ctx, slog.LevelWarn, "fence: stale write refused",
			slog.String("op", d.Op), slog.String("key", d.Key),
			slog.Int64("token", d.Token), slog.Int64("highest", d.Highest))
	}
}
