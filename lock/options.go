package lock

import (
	"time"

	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

// Option changes a Locker's defaults. New validates each one.
type Option func(*config) error

type config struct {
	// WithPrefix, WithOwner, WithSafetyMargin, WithRenewFraction,
	// WithWaitBackoff, WithHook, WithLogger; New sets the client.
	leasecore.Core[Lease, Event, kind]

	replicas       int
	replicaTimeout time.Duration
	failClosed     bool

	counterTokens bool             // WithCounterTokens
	serverTime    func() time.Time // WithServerTimeForTests

	batch int // WithBatching: the largest batch, 0 for none
}

func defaults() config {
	return config{Core: leasecore.Core[Lease, Event, kind]{Options: leasecore.Defaults(errs, defaultPrefix)}}
}

// invalid returns an error matching ErrInvalidOption, saying why.
func invalid(format string, args ...any) error { return errs.Invalid(format, args...) }

// WithPrefix sets the prefix of every key and channel name (default
// "lock:"). It must not be empty or contain '{' or '}', which would move the
// hash tag the keys of one name share.
func WithPrefix(prefix string) Option { return func(c *config) error { return c.SetPrefix(prefix) } }

// WithOwner sets the label stored with every lock this Locker takes, for
// diagnostics (Holder, HeldError), such as a host name or node id. It is
// not what Release and Extend compare: each acquisition has its own random
// id, so two Lockers with the same owner still exclude each other. The
// default is random.
func WithOwner(owner string) Option { return func(c *config) error { return c.SetOwner(owner) } }

// WithReplicas makes Acquire wait, with WAIT, until n replicas have the lock
// or timeout passes. If fewer acknowledge, a fail-closed Locker releases the
// lock and returns ErrNotReplicated; otherwise Acquire returns the lease with
// Lease.Replicas telling how many acknowledged.
//
// This narrows, and does not close, the failover gap: WAIT makes no write
// durable and a failover may still promote a replica that missed the lock.
// Acquisitions and renewals (Extend, the Keeper) wait; releases do not. A
// fail-closed renewal that too few replicas acknowledged fails with
// ErrNotReplicated and the lease keeps its previous deadline (the Keeper
// tries again until then).
//
// The WAIT follows the script on the connection that ran it, in the same
// round trip (the client's EvalWait; on a Cluster, the connection to the
// primary of the name's slot). go-redis (goredisadapter) reads its reply
// within the client's ReadTimeout, so keep timeout below it there.
func WithReplicas(n int, timeout time.Duration, failClosed bool) Option {
	return func(c *config) error {
		if n < 1 || timeout < time.Millisecond {
			return invalid("replicas %d (want ≥ 1), timeout %v (want ≥ 1ms)", n, timeout)
		}
		c.replicas, c.replicaTimeout, c.failClosed = n, timeout, failClosed
		return nil
	}
}

// WithSafetyMargin sets how much earlier than the lease's TTL, counted from
// when the acquire or renewal was sent, a Keeper or WithLock stops trusting
// the lease. The default is ttl/100 + 2ms, covering the drift between the
// local clock and the server's.
func WithSafetyMargin(d time.Duration) Option { return func(c *config) error { return c.SetMargin(d) } }

// WithRenewFraction sets how often WithLock renews, as a fraction of the
// lease's TTL (default 1/3: two chances to renew before the deadline).
func WithRenewFraction(f float64) Option { return func(c *config) error { return c.SetRenew(f) } }

// WithWaitBackoff sets the fallback of AcquireWait: when no release
// notification arrives, it retries after a jittered delay that starts near
// min and doubles up to max (defaults 25ms and 1s), and never later than the
// moment the holder's lease expires.
func WithWaitBackoff(min, max time.Duration) Option {
	return func(c *config) error { return c.SetBackoff(min, max) }
}

// WithCounterTokens makes tokens counter-only: each is the name's counter
// plus one (1, 2, 3, …), small and dense, as before hybrid tokens became the
// default. Such tokens go backwards when the counter is lost (a failover to
// a replica that missed the last acquisitions, a restart without
// persistence, FLUSHALL, eviction): a token already handed out is handed out
// again. The default, max(counter + 1, the server's time in µs), does not;
// see the package doc and docs/decisions/0007-hybrid-logical-clock-tokens.md.
func WithCounterTokens() Option {
	return func(c *config) error {
		if c.serverTime != nil {
			return invalid("WithCounterTokens and WithServerTimeForTests exclude each other")
		}
		c.counterTokens = true
		return nil
	}
}

// WithServerTimeForTests makes every acquire use now(), in place of the
// server's clock (TIME), as the clock part of its token, so a test can
// simulate servers whose clocks are skewed. Lease expiry still follows the
// server's clock. Never use it outside tests.
func WithServerTimeForTests(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return invalid("nil clock")
		}
		if c.counterTokens {
			return invalid("WithCounterTokens and WithServerTimeForTests exclude each other")
		}
		c.serverTime = now
		return nil
	}
}

// tokenClock returns acquire.lua's ARGV[3]: how the token is issued.
func (c *config) tokenClock() any {
	switch {
	case c.counterTokens:
		return ""
	case c.serverTime != nil:
		return c.serverTime().UnixMicro()
	}
	return "t"
}
