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
// With WithHook, each attempt is reported as OpAllow and the whole call,
// when it returns, as OpWait.
func (l *Limiter) WaitN(ctx context.Context, key string, r Rule, n int) (Result, error) {
	if l.cfg.hook == nil {
		return l.waitN(ctx, key, r, n)
	}
	var one [1]Limit
	if _, err := check(key, r, n, one[:0]); err != nil {
		return Result{}, err // bad input: no attempt, no event
	}
	start := time.Now()
	res, err := l.waitN(ctx, key, r, n)
	l.reportWait(ctx, key, r, res, err, time.Since(start))
	return res, err
}

func (l *Limiter) waitN(ctx context.Context, key string, r Rule, n int) (Result, error) {
	for {
		res, err := l.AllowN(ctx, key, r, n)
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
