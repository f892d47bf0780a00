package semaphore

import (
	"context"
	"time"
)

// WithPermit takes a permit of the semaphore called name (one attempt, as
// Acquire), runs fn while renewing the permit every ttl times the renew
// fraction (WithRenewFraction), and releases it when fn returns, even if
// ctx has ended by then, or if fn panics.
//
// fn receives the permit, whose Token must travel with every write fn
// makes, and a context cancelled the moment the permit can no longer be
// proven (context.Cause matches ErrPermitLost): fn must stop then.
//
// WithPermit returns ErrFull (a *FullError) without running fn when no
// permit is free; an error matching ErrPermitLost without running fn when
// the acquire came back too late to prove (see Keep); an error matching
// ErrPermitLost, joined with fn's, when the permit was lost while fn ran
// or was found gone at release; otherwise fn's error, or the release's.
func (s *Issuer) WithPermit(ctx context.Context, name string, capacity int, ttl time.Duration, fn func(ctx context.Context, p *Permit) error) error {
	return s.core().With(ctx, name, capacity, ttl, func(ttl time.Duration) (*Permit, error) { return s.Acquire(ctx, name, capacity, ttl) }, fn)
}
