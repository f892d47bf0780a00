package ratelimittest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/internal/model"
)

// A Limiter decides as a ratelimit.Limiter does, on state in memory. It is
// safe for concurrent use: each call is decided whole under one lock, as a
// script runs whole on the server. The zero value is a Limiter with no
// state, on the process's clock, as New() returns.
type Limiter struct {
	clock *Clock // nil: the process's clock

	mu    sync.Mutex
	store *model.Store
}

// An Option changes a Limiter built by New.
type Option func(*Limiter) error

// WithClock makes the Limiter read time from c instead of the process's
// clock, and Wait and WaitN wait for c to reach the time they need. A nil
// c is ratelimit.ErrInvalidOption.
func WithClock(c *Clock) Option {
	return func(l *Limiter) error {
		if c == nil {
			return fmt.Errorf("%w: nil clock", ratelimit.ErrInvalidOption)
		}
		l.clock = c
		return nil
	}
}

// New returns a Limiter with no state. A nil or bad option is
// ratelimit.ErrInvalidOption, as with ratelimit.New.
func New(opts ...Option) (*Limiter, error) {
	l := &Limiter{store: model.NewStore()}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: option %d is nil", ratelimit.ErrInvalidOption, i)
		}
		if err := o(l); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Allow reports whether one request on key is admitted by r, and consumes
// it if so, as ratelimit.Limiter.Allow.
func (l *Limiter) Allow(ctx context.Context, key string, r ratelimit.Rule) (ratelimit.Result, error) {
	res, _, err := l.decide(ctx, "allow", key, r, 1)
	return res, err
}

// AllowN admits n requests at once or none, as ratelimit.Limiter.AllowN.
func (l *Limiter) AllowN(ctx context.Context, key string, r ratelimit.Rule, n int) (ratelimit.Result, error) {
	res, _, err := l.decide(ctx, "allow", key, r, n)
	return res, err
}

// Take consumes as many of n requests as are available, at least one, as
// ratelimit.Limiter.Take.
func (l *Limiter) Take(ctx context.Context, key string, r ratelimit.Rule, n int) (ratelimit.Result, error) {
	res, _, err := l.decide(ctx, "take", key, r, n)
	return res, err
}

// Peek reports whether one request would be admitted now, consuming
// nothing, as ratelimit.Limiter.Peek.
func (l *Limiter) Peek(ctx context.Context, key string, r ratelimit.Rule) (ratelimit.Result, error) {
	res, _, err := l.decide(ctx, "peek", key, r, 1)
	return res, err
}

// Reset forgets what key has used under r, as ratelimit.Limiter.Reset.
func (l *Limiter) Reset(ctx context.Context, key string, r ratelimit.Rule) error {
	_, _, err := l.decide(ctx, "reset", key, r, 1)
	return err
}

// Wait blocks until one request is admitted and consumed, or ctx ends: it
// is WaitN with n = 1.
func (l *Limiter) Wait(ctx context.Context, key string, r ratelimit.Rule) (ratelimit.Result, error) {
	return l.WaitN(ctx, key, r, 1)
}

// WaitN blocks until n requests are admitted at once and consumed, or ctx
// ends, as ratelimit.Limiter.WaitN: a wait that would pass ctx's deadline
// (measured on the process's clock, as the Redis Limiter measures it)
// returns at once with an error matching context.DeadlineExceeded. With
// WithClock it waits for the Clock to reach the RetryAfter, not for the
// process's clock.
func (l *Limiter) WaitN(ctx context.Context, key string, r ratelimit.Rule, n int) (ratelimit.Result, error) {
	for {
		res, at, err := l.decide(ctx, "allow", key, r, n)
		if err != nil || res.Allowed {
			return res, err
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < res.RetryAfter {
			return res, fmt.Errorf("ratelimit: wait on %q: retry after %v passes the deadline: %w", key, res.RetryAfter, context.DeadlineExceeded)
		}
		if err := l.sleep(ctx, at, res.RetryAfter); err != nil {
			return res, fmt.Errorf("ratelimit: wait on %q: %w", key, err)
		}
	}
}

// sleep waits d from at, on the Limiter's clock.
func (l *Limiter) sleep(ctx context.Context, at time.Time, d time.Duration) error {
	if l.clock != nil {
		return l.clock.sleep(ctx, at.Add(d))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// decide is every call's one path, as in ratelimit: check the input, then
// run the model where the Limiter runs a script. It returns the time the
// call was decided at, which waits are measured from.
func (l *Limiter) decide(ctx context.Context, op, key string, r ratelimit.Rule, n int) (ratelimit.Result, time.Time, error) {
	lims, err := check(key, r, n)
	if err != nil {
		return ratelimit.Result{}, time.Time{}, err
	}
	if err := ctx.Err(); err != nil {
		// The Redis Limiter's call fails the same way before it is sent.
		return ratelimit.Result{}, time.Time{}, fmt.Errorf("ratelimit: %s on %q: %w", op, key, err)
	}
	keys, mlims, _ := modelCall(key, r, lims)
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var rep model.Reply
	switch op {
	case "reset":
		rep = l.state().Reset(keys, mlims)
	case "take":
		rep = l.state().Decide(now.UnixMicro(), keys, mlims, int64(n), model.Take)
	case "peek":
		rep = l.state().Decide(now.UnixMicro(), keys, mlims, int64(n), model.Peek)
	default:
		rep = l.state().Decide(now.UnixMicro(), keys, mlims, int64(n), model.Allow)
	}
	return result(rep, r), now, nil
}

// state returns the Limiter's state, made at first use on a zero Limiter.
// l.mu must be held.
func (l *Limiter) state() *model.Store {
	if l.store == nil {
		l.store = model.NewStore()
	}
	return l.store
}

func (l *Limiter) now() time.Time {
	if l.clock != nil {
		return l.clock.Now()
	}
	return time.Now()
}

// stateKey names a limit's state on key: the key, then every parameter of
// the limit (the window to the µs, as the scripts count it) and not its
// name, so a limit used alone and in a Policy shares its state, as on
// Redis. The key's length first keeps distinct pairs distinct.
func stateKey(key string, lim ratelimit.Limit) string {
	return strconv.Itoa(len(key)) + ":" + key + ":" + string(lim.Algorithm()) + ":" + strconv.Itoa(lim.N()) + ":" +
		strconv.FormatInt(lim.Window().Microseconds(), 10) + ":" + strconv.Itoa(lim.Burst())
}

// modelLimit is lim as the scripts receive it (ratelimit's packLimit):
// capacity, then the window in µs, or GCRA's unit and drain, the emission
// interval window/n reduced by their greatest common divisor.
func modelLimit(lim ratelimit.Limit) model.Limit {
	m := model.Limit{Cap: int64(lim.Burst()), A: lim.Window().Microseconds()}
	switch lim.Algorithm() {
	case ratelimit.AlgorithmSlidingLog:
		m.Alg = 'l'
	case ratelimit.AlgorithmSlidingCounter:
		m.Alg = 'c'
	default:
		m.Alg, m.B = 'g', int64(lim.N())
		if g := gcd(m.A, m.B); g > 0 {
			m.A, m.B = m.A/g, m.B/g
		}
	}
	return m
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
