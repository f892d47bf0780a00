package semaphore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Option changes an Issuer's defaults. New validates each one.
type Option func(*config) error

type config struct {
	prefix string
	owner  string

	margin    time.Duration
	marginSet bool
	renew     float64

	waitMin, waitMax time.Duration

	hook   func(context.Context, Event)
	logger *slog.Logger
}

func defaults() config {
	return config{
		prefix:  defaultPrefix,
		owner:   newID()[:16],
		renew:   1.0 / 3,
		waitMin: 25 * time.Millisecond,
		waitMax: time.Second,
	}
}

func badOption(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidOption, fmt.Sprintf(format, args...))
}

// WithPrefix sets the prefix of every key and channel (default
// "semaphore:"). It must not be empty or contain '{' or '}', which would
// move the hash tag that the keys of one semaphore share.
func WithPrefix(prefix string) Option {
	return func(c *config) error {
		if prefix == "" || strings.ContainsAny(prefix, "{}") {
			return badOption("prefix %q must be non-empty and contain no braces", prefix)
		}
		c.prefix = prefix
		return nil
	}
}

// WithOwner sets the label stored with every permit this Issuer grants, for
// diagnostics (Holders), such as a host name. Release and Extend do not
// compare it: each permit has its own random id. The default is random. It
// must not be empty.
func WithOwner(owner string) Option {
	return func(c *config) error {
		if owner == "" {
			return badOption("empty owner")
		}
		c.owner = owner
		return nil
	}
}

// WithSafetyMargin sets how much earlier than the permit's TTL, counted
// from when the acquire or renewal was sent, WithPermit stops trusting the
// permit. The default is ttl/100 + 2ms.
func WithSafetyMargin(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return badOption("negative safety margin %v", d)
		}
		c.margin, c.marginSet = d, true
		return nil
	}
}

// WithRenewFraction sets how often WithPermit renews, as a fraction of the
// TTL (default 1/3: two chances to renew before the deadline).
func WithRenewFraction(f float64) Option {
	return func(c *config) error {
		if !(f > 0 && f < 1) {
			return badOption("renew fraction %v not in (0, 1)", f)
		}
		c.renew = f
		return nil
	}
}

// WithWaitBackoff sets AcquireWait's fallback for a release notification
// that never arrives: it tries again after a jittered delay that starts
// near min and doubles up to max (defaults 25ms and 1s), and never later
// than the earliest live permit's expiry. max bounds how long a lost
// notification can delay a waiter.
func WithWaitBackoff(min, max time.Duration) Option {
	return func(c *config) error {
		if min <= 0 || max < min {
			return badOption("wait backoff %v..%v", min, max)
		}
		c.waitMin, c.waitMax = min, max
		return nil
	}
}

// WithHook calls hook with every decision of the Issuer, in the goroutine
// that made it, before the call returns (for WithPermit's renewals, in its
// renewal goroutine). Keep it fast. hook must not be nil.
func WithHook(hook func(ctx context.Context, e Event)) Option {
	return func(c *config) error {
		if hook == nil {
			return badOption("nil hook")
		}
		c.hook = hook
		return nil
	}
}

// WithLogger logs, at level Warn, each permit WithPermit or a Keeper lost
// while it was held (OpLost) and each release that found its permit gone
// (expired, or removed by a failover or an operator): the moments after which the holder's work was no longer
// protected by the semaphore, only by its token. Nothing else is logged,
// and nothing at all without this option. logger must not be nil.
func WithLogger(logger *slog.Logger) Option {
	return func(c *config) error {
		if logger == nil {
			return badOption("nil logger")
		}
		c.logger = logger
		return nil
	}
}

// marginFor returns the safety margin for a permit of ttl.
func (c *config) marginFor(ttl time.Duration) time.Duration {
	if c.marginSet {
		return c.margin
	}
	return ttl/100 + 2*time.Millisecond
}
