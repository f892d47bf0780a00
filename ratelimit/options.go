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
// prefix saves a few bytes on every key. It must be non-empty, as lock's
// and semaphore's (an empty one would put the limits among the
// application's own keys), and may not hold '{' or '}', which would move
// the hash tag.
func WithPrefix(prefix string) Option {
	return func(c *config) error {
		if prefix == "" || strings.ContainsAny(prefix, "{}") {
			return fmt.Errorf("%w: prefix %q must be non-empty and contain no braces", ErrInvalidOption, prefix)
		}
		c.prefix = prefix
		return nil
	}
}

// WithServerTimeForTests makes every decision use now() instead of the
// Redis server's clock. It exists so tests can place requests at exact
// instants (a window boundary, a retry-after). Never use it in production:
// app servers' clocks disagree, and the point of the Limiter is that only
// the server's clock counts. The monotonic guard still applies, and Wait
// still sleeps on the real clock. Key TTLs are always real time. It is
// lock's option of the same name, for the same use: the server's TIME
// replaced in every script.
func WithServerTimeForTests(now func() time.Time) Option {
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
// until the earliest moment the server could admit again. Only a rejection
// in which every limit of the rule has nothing left is kept: no request,
// from this process or another, can change such a limit (it would be
// rejected and consume nothing), so until then every field of the answer
// changes only with time, and the cache gives the Result the server would
// give, with every wait shorter by the time since.
//
// What is cached: a rejection of a call that needs one request (Allow,
// AllowN with n = 1, Take), answered to those calls only (a rejection says
// nothing about AllowN of more), for the same key and the same rule: a
// Limit and a Policy of that one Limit are different rules. A Policy
// rejected while one of its limits still has room goes to the server
// every time. Peek is never answered from the cache. Answers from the
// cache reach the hook marked Event.Cached, with no latency.
//
// Waits are measured on this process's clock from when the rejection's
// reply arrived. The server decided before its reply left, so a cached
// RetryAfter is never shorter than the server's, and a client that waits
// it is admitted (unless others spend the allowance first); it can be
// longer by the reply's time in flight, and for that long the cache
// rejects a call the server would admit
// (TestCachedRejectionOutlivesTheServersByAtMostTheRepliesTimeInFlight:
// 40 ms late after a reply 40 ms in flight).
//
// What it costs: a Reset, a change of limits or an operator's DEL made
// elsewhere is seen here only after the cached wait, or as soon as a call
// of this Limiter is admitted on one of the reset limits; this Limiter's
// own Reset drops every entry of its key at once. The cache holds at most
// size entries (the least recently used go first), allocates as entries
// are added, not at New, and starts no goroutine.
func WithDenyCache(size int) Option {
	return func(c *config) error {
		if size <= 0 {
			return fmt.Errorf("%w: deny cache size %d, must be positive", ErrInvalidOption, size)
		}
		c.denyCache = size
		return nil
	}
}
