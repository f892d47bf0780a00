package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Decision is one call's answer, given to the hook set with WithHook: every
// Allow, AllowN, Take, Peek, Reserve, Commit and Cancel (and each attempt
// of Wait), answered by
// Redis or, with WithDenyCache, by the cache (Cached). Bad input (an empty
// key, an invalid limit or n) is returned before any decision and is not
// reported; nor is Reset, which decides nothing.
type Decision struct {
	Op  string // "allow" (Allow, AllowN, Wait), "take", "peek", "reserve", "commit" or "cancel"
	Key string // the caller's key, before the prefix
	// Allowed, Limit, Granted, Remaining and RetryAfter are the Result's:
	// Limit is the binding limit (for a Policy, the one that decided).
	Allowed    bool
	Limit      Limit
	Granted    int
	Remaining  int
	RetryAfter time.Duration
	// Latency is how long the call took, its one round trip included; 0
	// for an answer from the deny cache.
	Latency time.Duration
	// Cached reports an answer from the deny cache (WithDenyCache), given
	// without a round trip: a rejection, as the server would give it.
	Cached bool
	// Err is the error of a call that got no answer from Redis (a network
	// or script error); the other fields but Op, Key and Latency are then
	// zero, Limit excepted for a single Limit.
	Err error
}

// observer is what WithHook and WithLogger set; the zero value observes
// nothing and costs a nil check per call.
type observer struct {
	hook   func(context.Context, Decision)
	logger *slog.Logger
}

// WithHook calls hook with every decision, allowed, rejected or failed, in
// the caller's goroutine, after the round trip and before the call
// returns. Keep it fast: it adds to every call's latency. A metrics or
// tracing adapter plugs in here. hook must not be nil.
func WithHook(hook func(ctx context.Context, d Decision)) Option {
	return func(c *config) error {
		if hook == nil {
			return fmt.Errorf("%w: nil hook", ErrInvalidOption)
		}
		c.hook = hook
		return nil
	}
}

// WithLogger logs, at level Warn, each call that failed to get a decision
// from Redis (the caller must then fail open or closed); rejections are
// the limiter working and are not logged. Nothing is logged without this
// option. logger must not be nil.
func WithLogger(logger *slog.Logger) Option {
	return func(c *config) error {
		if logger == nil {
			return fmt.Errorf("%w: nil logger", ErrInvalidOption)
		}
		c.logger = logger
		return nil
	}
}
