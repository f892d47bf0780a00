package lock

import (
	"context"
	"errors"
	"fmt"
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
// ErrLeaseLost, joined with fn's error, when the lease was lost while fn ran
// or was found gone at release. Otherwise it returns fn's error, or the
// release's (ErrReplyLost when its reply was lost: see Release). If fn panics or calls runtime.Goexit, the lease is released on
// the way out.
func (l *Locker) WithLock(ctx context.Context, name string, ttl time.Duration, fn func(ctx context.Context, lease *Lease) error) error {
	if fn == nil {
		return invalid("nil fn")
	}
	if err := checkName(name); err != nil {
		return err
	}
	ttl, err := l.checkTTL(ttl)
	if err != nil {
		return err
	}
	interval := time.Duration(float64(ttl) * l.cfg.renew)
	if err := checkInterval(ttl, interval, l.cfg.marginFor(ttl)); err != nil {
		return err
	}
	lease, err := l.Acquire(ctx, name, ttl)
	if err != nil {
		return err
	}
	k, err := l.Keep(ctx, lease, interval)
	if err != nil {
		// The acquire came back too close to its deadline and the renewal
		// that would have proven it failed (ErrLeaseLost): fn does not run.
		_, _ = l.release(ctx, lease)
		return err
	}
	returned := false
	defer func() {
		// fn did not return: it panicked (the panic goes on up unchanged)
		// or called runtime.Goexit (t.Fatal in a test). Either way, stop
		// renewing and give the lock back, or it would be held for as long
		// as ctx lives.
		if !returned {
			_ = k.Stop()
			_, _ = l.release(ctx, lease)
		}
	}()
	fnErr := fn(k.Context(), lease)
	returned = true
	lost := k.Stop()

	released, err := l.release(ctx, lease)
	switch {
	case lost != nil:
		return errors.Join(fnErr, lost)
	case err != nil:
		return errors.Join(fnErr, err)
	case !released:
		return errors.Join(fnErr, fmt.Errorf("%w: %q (token %d) was gone at release", ErrLeaseLost, name, lease.Token))
	}
	return fnErr
}

// release releases even when ctx has ended, waiting at most one TTL: past
// that the lock has expired on its own.
func (l *Locker) release(ctx context.Context, lease *Lease) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lease.TTL)
	defer cancel()
	return l.Release(ctx, lease)
}
