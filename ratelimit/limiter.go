package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis-primitives/go/luascripts"
)

// DefaultPrefix starts every key a Limiter writes, unless WithPrefix
// changes it.
const DefaultPrefix = "ratelimit:"

// A Limiter decides on keys with limits kept in Redis. It holds no state of
// its own and is safe for concurrent use; every decision is one script call.
type Limiter struct {
	client luascripts.Client
	prefix string
	pinned func() time.Time
}

// An Option changes a Limiter built by New.
type Option func(*Limiter)

// WithPrefix sets the prefix of every key the Limiter writes (default
// DefaultPrefix). A key "user:42" and a limit become keys such as
// "ratelimit:{user:42}:log:100:60000000" ('{', '}' and '%' in a key are
// escaped so that the key cannot move the hash tag).
func WithPrefix(prefix string) Option {
	return func(l *Limiter) { l.prefix = prefix }
}

// WithPinnedClockForTests makes every decision use now() instead of the
// Redis server's clock. It exists so tests can place requests at exact
// instants (a window boundary, a retry-after). Never use it in production:
// app servers' clocks disagree, and the point of the Limiter is that only
// the server's clock counts. The monotonic guard still applies, and Wait
// still sleeps on the real clock. Key TTLs are always real time.
func WithPinnedClockForTests(now func() time.Time) Option {
	return func(l *Limiter) { l.pinned = now }
}

// New returns a Limiter that keeps its state in the server behind client.
// Any go-redis client fits: *redis.Client, *redis.ClusterClient, *redis.Ring
// or redis.UniversalClient.
func New(client luascripts.Client, opts ...Option) (*Limiter, error) {
	l := &Limiter{client: client, prefix: DefaultPrefix}
	for _, o := range opts {
		o(l)
	}
	if client == nil {
		return nil, fmt.Errorf("%w: nil client", ErrInvalidOption)
	}
	if strings.ContainsAny(l.prefix, "{}") {
		return nil, fmt.Errorf("%w: prefix %q contains '{' or '}', which would move the hash tag", ErrInvalidOption, l.prefix)
	}
	return l, nil
}

// Allow reports whether one request on key is admitted by r (a Limit or a
// Policy), and consumes it if so.
func (l *Limiter) Allow(ctx context.Context, key string, r Rule) (Result, error) {
	return l.run(ctx, luascripts.RatelimitDecide, "allow", key, r, 1)
}

// AllowN admits n requests at once or none: a rejected AllowN consumes
// nothing. n larger than any limit's Burst is an error, since it could never
// succeed.
func (l *Limiter) AllowN(ctx context.Context, key string, r Rule, n int) (Result, error) {
	return l.run(ctx, luascripts.RatelimitDecide, "allow", key, r, n)
}

// Take consumes as many of n requests as are available now, at least one,
// and reports how many in Result.Granted. When none is available it is
// rejected and RetryAfter says when one will be.
func (l *Limiter) Take(ctx context.Context, key string, r Rule, n int) (Result, error) {
	return l.run(ctx, luascripts.RatelimitDecide, "take", key, r, n)
}

// Peek reports whether one request on key would be admitted now, and the
// remaining allowance, without consuming anything. It runs a read-only
// script (EVALSHA_RO), so it also works against a replica.
func (l *Limiter) Peek(ctx context.Context, key string, r Rule) (Result, error) {
	return l.run(ctx, luascripts.RatelimitPeek, "peek", key, r, 1)
}

// run validates, calls the script once and reads its reply.
func (l *Limiter) run(ctx context.Context, script *luascripts.Script, mode, key string, r Rule, n int) (Result, error) {
	if key == "" {
		return Result{}, fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	limits, err := validateRule(r, n)
	if err != nil {
		return Result{}, err
	}
	// One hash tag for every key of the call: Redis Cluster puts them in one
	// slot, so the script may touch them all.
	base := l.prefix + "{" + tagEscaper.Replace(key) + "}:"
	keys := make([]string, 1, 1+len(limits))
	keys[0] = base + "meta"
	pinned := ""
	if l.pinned != nil {
		pinned = fmt.Sprint(l.pinned().UnixMicro())
	}
	args := make([]any, 0, 4+4*len(limits))
	args = append(args, mode, n, pinned, len(limits))
	for _, lim := range limits {
		keys = append(keys, base+lim.id())
		args = append(args, lim.script()...)
	}
	reply, err := script.Run(ctx, l.client, keys, args...).Int64Slice()
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			return Result{}, fmt.Errorf("ratelimit: %s on %q: %w (%w)", mode, key, cerr, err)
		}
		return Result{}, fmt.Errorf("ratelimit: %s on %q: %w", mode, key, err)
	}
	if len(reply) != 3+4*len(limits) {
		return Result{}, fmt.Errorf("ratelimit: %s on %q: unexpected reply of %d values", mode, key, len(reply))
	}
	return decode(reply, limits), nil
}

// tagEscaper keeps a user's key from ending or emptying the hash tag it is
// placed in ("}" would give the tag "{}", which Redis ignores, scattering
// the call's keys over slots). Escaping '%' as well keeps it one-to-one, so
// distinct keys keep distinct limits.
var tagEscaper = strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D")

// decode turns the script's reply into a Result and picks the binding
// limit.
func decode(reply []int64, limits []Limit) Result {
	granted, allowed := int(reply[0]), reply[1] == 1
	each := make([]Result, len(limits))
	bind := 0
	for i, lim := range limits {
		v := reply[3+4*i:]
		each[i] = Result{
			Allowed:    v[0] == 1,
			Limit:      lim,
			Granted:    granted,
			Remaining:  int(v[1]),
			RetryAfter: ceilMillis(v[2]),
			ResetAfter: ceilMillis(v[3]),
		}
		b := each[bind]
		if allowed {
			if each[i].Remaining < b.Remaining {
				bind = i
			}
		} else if !each[i].Allowed && (b.Allowed || each[i].RetryAfter > b.RetryAfter) {
			bind = i
		}
	}
	res := each[bind]
	res.Allowed = allowed
	if allowed {
		res.RetryAfter = 0
	}
	res.Each = each
	return res
}
