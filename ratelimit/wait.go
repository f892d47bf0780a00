package ratelimit

import (
	"context"
	"fmt"
	"time"
)

// Wait blocks until one request on key is admitted by r and consumed, or
// ctx ends. It is WaitN with n = 1.
func (l *Limiter) Wait(ctx context.Context, key string, r Rule) (Result, error) {
	return l.WaitN(ctx, key, r, 1)
}

// WaitN blocks until n requests on key are admitted by r at once and
// consumed, or ctx ends. It sleeps for the RetryAfter the server reports,
// then asks again (another caller may have taken the slot meanwhile). If
// the reported wait would pass ctx's deadline it returns at once with an
// error that matches context.DeadlineExceeded, without sleeping in vain.
// n more than r can ever admit at once (a limit's Burst) returns ErrInvalidN
// at once, since no wait would help.
//
// With WithHook, each attempt is reported as "allow" and the whole call,
// when it returns, as "wait".
func (l *Limiter) WaitN(ctx context.Context, key string, r Rule, n int) (Result, error) {
	return l.wait(ctx, call{m: modeAllow, key: key, rule: r, n: n}, func() (Result, error) {
		return l.AllowN(ctx, key, r, n)
	})
}

// ReserveWait blocks until amount is reserved on key under r, as Reserve
// reserves it, or ctx ends: it waits as WaitN does, for the RetryAfter of
// each rejection, and returns at once, with an error matching
// context.DeadlineExceeded, when that wait would pass ctx's deadline. The
// Reservation returned with that error is the last rejected attempt's,
// whose Result says when the amount could be reserved. Bad input is
// Reserve's error, at once.
//
// With WithHook, each attempt is reported as "reserve" and the whole call,
// when it returns, as "wait".
func (l *Limiter) ReserveWait(ctx context.Context, key string, r Rule, amount int, ttl time.Duration) (*Reservation, error) {
	var rs *Reservation
	_, err := l.wait(ctx, call{m: modeReserve, key: key, rule: r, n: amount, ttl: ttl}, func() (Result, error) {
		var err error
		if rs, err = l.Reserve(ctx, key, r, amount, ttl); err != nil {
			return Result{}, err
		}
		return rs.Result, nil
	})
	return rs, err
}

// wait makes attempt until it is admitted or fails, sleeping for the
// RetryAfter of each rejection, and reports the whole call (c) to the
// hook as "wait". Bad input fails the first attempt (or the check before
// it, with a hook) and is not reported.
func (l *Limiter) wait(ctx context.Context, c call, attempt func() (Result, error)) (Result, error) {
	if l.cfg.hook == nil {
		return retry(ctx, c.key, attempt)
	}
	var one [1]Limit
	if _, err := c.check(one[:0]); err != nil {
		return Result{}, err // bad input: no attempt, no event
	}
	start := time.Now()
	res, err := retry(ctx, c.key, attempt)
	l.reportWait(ctx, c.key, c.rule, res, err, time.Since(start))
	return res, err
}

// retry makes attempt until it is admitted or fails, or ctx ends or its
// deadline would pass before the next attempt.
func retry(ctx context.Context, key string, attempt func() (Result, error)) (Result, error) {
	for {
		res, err := attempt()
		if err != nil || res.Allowed {
			return res, err
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < res.RetryAfter {
			return res, fmt.Errorf("ratelimit: wait on %q: retry after %v passes the deadline: %w", key, res.RetryAfter, context.DeadlineExceeded)
		}
		t := time.NewTimer(res.RetryAfter)
		select {
		case <-ctx.Done():
			t.Stop()
			return res, fmt.Errorf("ratelimit: wait on %q: %w", key, ctx.Err())
		case <-t.C:
		}
	}
}
