package semaphore

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

// Option changes an Issuer's defaults. New validates each one.
type Option func(*config) error

type config struct {
	// WithPrefix, WithOwner, WithSafetyMargin, WithRenewFraction,
	// WithWaitBackoff, WithHook, WithLogger; New sets the client.
	leasecore.Core[Permit, Event, kind]
}

func defaults() config {
	return config{Core: leasecore.Core[Permit, Event, kind]{Options: leasecore.Defaults(errs, defaultPrefix)}}
}

// WithPrefix sets the prefix of every key and channel (default
// "semaphore:"). It must not be empty or contain '{' or '}', which would
// move the hash tag that the keys of one semaphore share.
func WithPrefix(prefix string) Option { return func(c *config) error { return c.SetPrefix(prefix) } }

// WithOwner sets the label stored with every permit this Issuer grants, for
// diagnostics (Holders), such as a host name. Release and Extend do not
// compare it: each permit has its own random id. The default is random. It
// must not be empty.
func WithOwner(owner string) Option { return func(c *config) error { return c.SetOwner(owner) } }

// WithWaitBackoff sets AcquireWait's fallback for a lost release
// notification, as lock's: a jittered delay from min doubling to max
// (defaults 25ms and 1s), which bounds how long a lost one delays a waiter.
func WithWaitBackoff(min, max time.Duration) Option {
	return func(c *config) error { return c.SetBackoff(min, max) }
}

// WithSafetyMargin sets how much earlier than the permit's TTL, counted
// from when the acquire or renewal was sent, a Keeper or WithPermit stops
// trusting the permit. The default is ttl/100 + 2ms.
func WithSafetyMargin(d time.Duration) Option { return func(c *config) error { return c.SetMargin(d) } }

// WithRenewFraction sets how often WithPermit renews, as a fraction of the
// TTL (default 1/3: two chances to renew before the deadline).
func WithRenewFraction(f float64) Option { return func(c *config) error { return c.SetRenew(f) } }

// WithHook calls hook with every decision of the Issuer, in the goroutine
// that made it (a Keeper's renewal goroutine for its renewals), before the
// call returns. Keep it fast. hook must not be nil.
func WithHook(hook func(ctx context.Context, e Event)) Option {
	return func(c *config) error { return c.SetHook(hook) }
}

// WithLogger logs, at level Warn, each permit lost while held ("lost")
// and each release that found its permit gone: the moments after which
// the holder's work was protected by its token alone. Nothing else is
// logged. logger must not be nil.
func WithLogger(logger *slog.Logger) Option {
	return func(c *config) error { return c.SetLogger(logger) }
}
