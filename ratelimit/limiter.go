package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/luascripts"
)

// A Limiter decides on keys with limits kept in Redis. It holds no state of
// its own and is safe for concurrent use; every decision is one script call.
type Limiter struct {
	client redis.Scripter
	cfg    config
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

// decide validates and makes the decision in one script call.
func (l *Limiter) decide(ctx context.Context, m mode, key string, r Rule, n int) (Result, error) {
	if key == "" {
		return Result{}, fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	switch r := r.(type) {
	case Limit:
		if err := validateLimit(r, n); err != nil {
			return Result{}, err
		}
		return l.decideOne(ctx, m, key, r, n)
	case Policy:
		if err := validatePolicy(r, n); err != nil {
			return Result{}, err
		}
		return l.decidePolicy(ctx, m, key, r, n)
	default: // nil: Limit and Policy are the only Rules
		return Result{}, fmt.Errorf("%w: nil rule", ErrInvalidLimit)
	}
}

// pinnedArg is the scripts' ARGV[3]: the pinned time in µs, or "" for the
// server's clock.
func (l *Limiter) pinnedArg() string {
	if l.cfg.pinned == nil {
		return ""
	}
	return strconv.FormatInt(l.cfg.pinned().UnixMicro(), 10)
}

// callError wraps a failed script call, joining ctx's error when the
// context ended, so errors.Is(err, context.DeadlineExceeded) holds.
func (l *Limiter) callError(ctx context.Context, m mode, key string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("ratelimit: %s on %q: %w (%w)", m, key, cerr, err)
	}
	return fmt.Errorf("ratelimit: %s on %q: %w", m, key, err)
}
