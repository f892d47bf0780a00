package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/luascripts"
)

// A Limiter decides on keys with limits kept in Redis. It holds no state of
// its own and is safe for concurrent use; every decision is one script call.
type Limiter struct {
	client redis.Scripter
	cfg    config
	deny   *denyCache // nil unless WithDenyCache
	batch  *batcher   // nil unless WithBatching
}

// New returns a Limiter that keeps its state in the server behind client.
// Any go-redis client fits: *redis.Client, *redis.ClusterClient, *redis.Ring
// or redis.UniversalClient. A nil client is ErrNilClient; a nil or bad
// option ErrInvalidOption.
func New(client redis.Scripter, opts ...Option) (*Limiter, error) {
	if luascripts.IsNil(client) {
		return nil, ErrNilClient
	}
	l := &Limiter{client: client, cfg: config{prefix: DefaultPrefix}}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: option %d is nil", ErrInvalidOption, i)
		}
		if err := o(&l.cfg); err != nil {
			return nil, err
		}
	}
	if l.cfg.denyCache > 0 {
		l.deny = newDenyCache(l.cfg.denyCache)
	}
	if l.cfg.batch > 0 {
		var err error
		if l.batch, err = newBatcher(client, l.cfg.batch); err != nil {
			return nil, err
		}
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

// A mode is what a call does, the scripts' ARGV[2].
type mode string

const (
	modeAllow mode = "allow"
	modeTake  mode = "take"
	modePeek  mode = "peek"
)

// arg is m as a script argument; constants, so passing one allocates
// nothing.
func (m mode) arg() any {
	switch m {
	case modeAllow:
		return "allow"
	case modeTake:
		return "take"
	}
	return "peek"
}

// decide validates and makes the decision: from the deny cache when it
// holds the answer, otherwise in one script call. run (observe.go) wraps
// it for the hook and the logger.
func (l *Limiter) decide(ctx context.Context, m mode, key string, r Rule, n int) (Result, error) {
	if key == "" {
		return Result{}, fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	var err error
	switch r := r.(type) {
	case Limit:
		err = validateLimit(r, n)
	case Policy:
		err = validatePolicy(r, n)
	default: // nil: Limit and Policy are the only Rules
		err = fmt.Errorf("%w: nil rule", ErrInvalidLimit)
	}
	if err != nil {
		return Result{}, err
	}
	// A cached rejection answers calls that need one request (Allow,
	// AllowN of 1, Take): it says nothing about more.
	cached := l.deny != nil && m != modePeek && (n == 1 || m == modeTake)
	var at time.Time
	pinned := ""
	if l.cfg.pinned != nil {
		at = l.cfg.pinned()
		pinned = strconv.FormatInt(at.UnixMicro(), 10)
	} else if cached {
		at = time.Now()
	}
	var id string
	if cached {
		id = denyID(key, r)
		if reply, ok := l.deny.get(id, at); ok {
			return decode(r, reply), nil
		}
	}
	var reply []int64
	if lim, ok := r.(Limit); ok {
		reply, err = l.callOne(ctx, m, key, lim, n, pinned)
	} else {
		reply, err = l.callPolicy(ctx, m, key, r.(Policy), n, pinned)
	}
	if err != nil {
		return Result{}, err
	}
	if cached && reply[1] == 0 {
		l.deny.put(id, at, reply)
	}
	return decode(r, reply), nil
}

// decode reads a script's reply for rule r.
func decode(r Rule, reply []int64) Result {
	if lim, ok := r.(Limit); ok {
		return decodeOne(lim, reply)
	}
	return decodePolicy(r.(Policy), reply)
}

// denyID names a key and rule in the deny cache: the key, then the id of
// each limit (the names of their state, which hold every parameter).
func denyID(key string, r Rule) string {
	id := key
	for _, lim := range r.limits() {
		id += "\x00" + lim.id
	}
	return id
}

// callError wraps a failed script call, joining ctx's error when the
// context ended, so errors.Is(err, context.DeadlineExceeded) holds.
func (l *Limiter) callError(ctx context.Context, m mode, key string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("ratelimit: %s on %q: %w (%w)", m, key, cerr, err)
	}
	return fmt.Errorf("ratelimit: %s on %q: %w", m, key, err)
}
