package ratelimit

import (
	"fmt"
	"strings"
	"time"
)

// DefaultPrefix starts every key a Limiter writes, unless WithPrefix
// changes it.
const DefaultPrefix = "ratelimit:"

// config holds what the options set.
type config struct {
	prefix    string
	pinned    func() time.Time
	denyCache int
	batch     int // WithBatching's size; 0: no batching

	observer // WithHook, WithLogger
}

// An Option changes a Limiter built by New. Each validates its input; New
// returns ErrInvalidOption, wrapped with the reason, for a bad one.
type Option func(*config) error

// WithPrefix sets the prefix of every key the Limiter writes (default
// DefaultPrefix); the package documentation gives the key layout. A short
// prefix saves a few bytes on every key. It may not hold '{' or '}', which
// would move the hash tag.
func WithPrefix(prefix string) Option {
	return func(c *config) error {
		if strings.ContainsAny(prefix, "{}") {
			return fmt.Errorf("%w: prefix %q contains '{' or '}', which would move the hash tag", ErrInvalidOption, prefix)
		}
		c.prefix = prefix
		return nil
	}
}

// WithPinnedClockForTests makes every decision use now() instead of the
// Redis server's clock. It exists so tests can place requests at exact
// instants (a window boundary, a retry-after). Never use it in production:
// app servers' clocks disagree, and the point of the Limiter is that only
// the server's clock counts. The monotonic guard still applies, and Wait
// still sleeps on the real clock. Key TTLs are always real time.
func WithPinnedClockForTests(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return fmt.Errorf("%w: nil clock", ErrInvalidOption)
		}
		c.pinned = now
		return nil
	}
}

// WithDenyCache keeps up to size rejections in this process and answers
// further calls on the same key and rule from them, without a round trip,
// until their RetryAfter. A rejected key cannot be admitted before then by
// anything other requests do (they only consume), so the answers are the
// Results the server would give: the same fields, waits shorter by the
// time since.
//
// What is cached: a rejection of a call that needs one request (Allow,
// AllowN with n = 1, Take), answered to those calls only (a rejection says
// nothing about AllowN of more). A Policy is cached as a whole, and only
// while every field of its reply is predictable: each limit either has
// nothing left or is untouched; a policy rejection while another of its
// limits is partly used goes to the server every time. Peek is never
// answered from the cache.
//
// What it costs: a Reset, a change of limits or an operator's DEL made
// elsewhere is seen here only after the cached RetryAfter; waits are
// measured on this process's clock from when the rejected call was sent,
// so they end no later than the server's. The cache holds at most size
// entries (the least recently used go first) and starts no goroutine.
func WithDenyCache(size int) Option {
	return func(c *config) error {
		if size <= 0 {
			return fmt.Errorf("%w: deny cache size %d, must be positive", ErrInvalidOption, size)
		}
		c.denyCache = size
		return nil
	}
}
