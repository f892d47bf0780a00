package lock

import (
	"context"
	"time"
)

// WithLock acquires name for ttl, runs fn while renewing the lease every
// ttl times the renew fraction (see WithRenewFraction), and releases it with
// compare-and-delete when fn returns, even if ctx has ended by then.
//
// fn receives the lease, whose Token must travel with every write fn makes,
// and a context that is cancelled the moment the lease can no longer be
// proven: context.Cause then matches ErrLeaseLost. fn must stop when it is;
// nothing can stop it otherwise, which is why the token matters.
//
// The renewals update a copy: lease.RequestedAt stays the acquire's, so
// lease.Deadline errs early, never late.
//
// WithLock returns ErrHeld (a *HeldError) without running fn when the name
// is taken; an error matching ErrLeaseLost without running fn when the
// acquire came back too late to prove (see Keep); and an error matching
// ErrLeaseLost, joined with fn's error (and the release's, if it failed),
// when the lease was lost while fn ran or was found gone at release.
// Otherwise it returns fn's error joined with the release's (ErrReplyLost
// when its reply was lost: see Release). If fn panics or calls
// runtime.Goexit, the lease is released on the way out.
func (l *Locker) WithLock(ctx context.Context, name string, ttl time.Duration, fn func(ctx context.Context, lease *Lease) error) error {
	return l.core().With(ctx, name, 1, ttl, func(ttl time.Duration) (*Lease, error) { return l.Acquire(ctx, name, ttl) }, fn)
}

// release releases even when ctx has ended, waiting at most one TTL: past
// that the lock has expired on its own.
func (l *Locker) release(ctx context.Context, lease *Lease) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lease.TTL)
	defer cancel()
	return l.Release(ctx, lease)
}
