package semaphore

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// WithPermit takes a permit of the semaphore called name (one attempt, as
// Acquire), runs fn while renewing the permit every ttl times the renew
// fraction (WithRenewFraction), and releases it when fn returns, even if
// ctx has ended by then, or if fn panics.
//
// fn receives the permit, whose Token must travel with every write fn
// makes, and a context that is cancelled the moment the permit can no
// longer be proven: context.Cause then matches ErrPermitLost. fn must stop
// when it is; nothing can stop it otherwise, which is why the token
// matters.
//
// WithPermit returns ErrFull (a *FullError) without running fn when no
// permit is free; an error matching ErrPermitLost, joined with fn's, when
// the permit was lost while fn ran or was found gone at release;
// otherwise fn's error, or the release's.
func (s *Issuer) WithPermit(ctx context.Context, name string, capacity int, ttl time.Duration, fn func(ctx context.Context, p *Permit) error) (err error) {
	if fn == nil {
		return badOption("nil fn")
	}
	ttl, err = checkCall(name, capacity, ttl)
	if err != nil {
		return err
	}
	every, margin := time.Duration(float64(ttl)*s.cfg.renew), s.cfg.marginFor(ttl)
	if err := checkEvery(ttl, every, margin); err != nil {
		return err
	}
	p, err := s.Acquire(ctx, name, capacity, ttl)
	if err != nil {
		return err
	}
	k := s.keep(ctx, p, every, margin)
	// One way out, however fn ends (a return, a panic, runtime.Goexit):
	// stop renewing, give the place back, then say what became of it. A
	// panic goes on up unchanged.
	var fnErr error
	defer func() { err = s.finish(ctx, p, k, fnErr) }()
	fnErr = fn(k.Context(), p)
	return nil // replaced by finish's verdict
}

// finish ends WithPermit: the Keeper stopped and the permit released, it
// joins fn's error with a loss while fn ran, a failed release, or a
// permit found gone at release.
func (s *Issuer) finish(ctx context.Context, p *Permit, k *Keeper, fnErr error) error {
	lost := k.Stop()
	released, err := s.giveBack(ctx, p)
	if lost == nil && err == nil && !released {
		lost = fmt.Errorf("%w: %q (token %d) was gone at release", ErrPermitLost, p.Name, p.Token)
	}
	return errors.Join(fnErr, lost, err)
}

// giveBack releases p even when ctx has ended, for at most one TTL: past
// that the permit has expired by itself.
func (s *Issuer) giveBack(ctx context.Context, p *Permit) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.TTL)
	defer cancel()
	return s.Release(ctx, p)
}
