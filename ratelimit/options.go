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
	prefix string
	pinned func() time.Time

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
