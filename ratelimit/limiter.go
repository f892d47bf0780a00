package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
// "ratelimit:{user:42}:log:100:1m0s" ('{', '}' and '%' in a key are
// escaped so that the key cannot move the hash tag). Key names count in the
// memory per key: a short prefix saves a few bytes on every key.
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
	if luascripts.IsNil(client) {
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
	return l.run(ctx, modeAllow, key, r, 1)
}

// AllowN admits n requests at once or none: a rejected AllowN consumes
// nothing. n larger than any limit's Burst is an error, since it could never
// succeed.
func (l *Limiter) AllowN(ctx context.Context, key string, r Rule, n int) (Result, error) {
	return l.run(ctx, modeAllow, key, r, n)
}

// Take consumes as many of n requests as are available now, at least one,
// and reports how many in Result.Granted. When none is available it is
// rejected and RetryAfter says when one will be. As with AllowN, n more than
// a limit can ever admit at once (its Burst) is ErrInvalidN.
func (l *Limiter) Take(ctx context.Context, key string, r Rule, n int) (Result, error) {
	return l.run(ctx, modeTake, key, r, n)
}

// Peek reports whether one request on key would be admitted now, and the
// remaining allowance, without consuming anything. It runs a read-only
// script (EVALSHA_RO), so it also works against a replica.
func (l *Limiter) Peek(ctx context.Context, key string, r Rule) (Result, error) {
	return l.run(ctx, modePeek, key, r, 1)
}

// A mode is the script's first argument, boxed once so that passing it
// allocates nothing.
type mode struct {
	name string
	arg  any
	peek bool
}

var (
	modeAllow = &mode{name: "allow", arg: "allow"}
	modeTake  = &mode{name: "take", arg: "take"}
	modePeek  = &mode{name: "peek", arg: "peek", peek: true}
)

// run validates, calls the script once and reads its reply.
func (l *Limiter) run(ctx context.Context, m *mode, key string, r Rule, n int) (Result, error) {
	if key == "" {
		return Result{}, fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	var limits []Limit
	switch r := r.(type) {
	case Limit:
		if err := validateLimit(r, n); err != nil {
			return Result{}, err
		}
		// A one-element array on the stack: no slice to allocate.
		one := [1]Limit{r}
		limits = one[:]
	case Policy:
		if err := validatePolicy(r, n); err != nil {
			return Result{}, err
		}
		limits = r
	default: // nil: Limit and Policy are the only Rules
		return Result{}, fmt.Errorf("%w: nil rule", ErrInvalidLimit)
	}
	// One hash tag for every key of the call: Redis Cluster puts them in one
	// slot, so the script may touch them all.
	base := l.prefix + "{" + tagEscaper.Replace(key) + "}:"
	keys := make([]string, len(limits))
	var pinned any = ""
	if l.pinned != nil {
		pinned = strconv.FormatInt(l.pinned().UnixMicro(), 10)
	}
	args := make([]any, 4, 4+4*len(limits))
	args[0], args[1], args[2], args[3] = m.arg, n, pinned, len(limits)
	for i, lim := range limits {
		keys[i] = base + lim.id
		args = append(args, lim.args[:]...)
	}
	reply, err := scriptFor(m, limits).Run(ctx, l.client, keys, args...).Slice()
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			return Result{}, fmt.Errorf("ratelimit: %s on %q: %w (%w)", m.name, key, cerr, err)
		}
		return Result{}, fmt.Errorf("ratelimit: %s on %q: %w", m.name, key, err)
	}
	res, ok := decode(reply, limits)
	if !ok {
		return Result{}, fmt.Errorf("ratelimit: %s on %q: unexpected reply %v", m.name, key, reply)
	}
	return res, nil
}

// scriptFor picks the script for a call: the one that holds only the
// algorithms its limits use, so the server defines no functions the call
// does not use.
func scriptFor(m *mode, limits []Limit) *luascripts.Script {
	set := 0
	for _, l := range limits {
		switch l.alg {
		case AlgorithmSlidingLog:
			set |= luascripts.RatelimitLog
		case AlgorithmSlidingCounter:
			set |= luascripts.RatelimitCounter
		default:
			set |= luascripts.RatelimitGCRA
		}
	}
	return luascripts.Ratelimit(set, m.peek)
}

// tagEscaper keeps a user's key from ending or emptying the hash tag it is
// placed in ("}" would give the tag "{}", which Redis ignores, scattering
// the call's keys over slots). Escaping '%' as well keeps it one-to-one, so
// distinct keys keep distinct limits.
var tagEscaper = strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D")

// decode turns the script's reply into a Result and picks the binding
// limit. The reply is { granted, allowed, then per limit: allowed,
// remaining, retry-after µs, reset-after µs }. Each is filled for a policy
// only: a single Limit's Result is its own state.
func decode(reply []any, limits []Limit) (Result, bool) {
	if len(reply) != 2+4*len(limits) {
		return Result{}, false
	}
	for _, x := range reply {
		if _, ok := x.(int64); !ok {
			return Result{}, false
		}
	}
	at := func(i int) int64 { return reply[i].(int64) }
	granted, allowed := int(at(0)), at(1) == 1
	limitResult := func(i int) Result {
		j := 2 + 4*i
		return Result{
			Allowed:    at(j) == 1,
			Limit:      limits[i],
			Granted:    granted,
			Remaining:  int(at(j + 1)),
			RetryAfter: ceilMillis(at(j + 2)),
			ResetAfter: ceilMillis(at(j + 3)),
		}
	}
	var res Result
	if len(limits) == 1 {
		res = limitResult(0)
	} else {
		each := make([]Result, len(limits))
		bind := 0
		for i := range limits {
			each[i] = limitResult(i)
			b := each[bind]
			if allowed {
				if each[i].Remaining < b.Remaining {
					bind = i
				}
			} else if !each[i].Allowed && (b.Allowed || each[i].RetryAfter > b.RetryAfter) {
				bind = i
			}
		}
		res = each[bind]
		res.Each = each
	}
	res.Allowed = allowed
	if allowed {
		res.RetryAfter = 0
	}
	return res, true
}
