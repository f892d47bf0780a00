package semaphore

import (
	"context"
	"errors"
	"time"
)

// AcquireWait takes a permit as Acquire does, waiting for as long as ctx
// allows while the semaphore is full. It returns as soon as it holds a
// permit, with an error matching ctx's (and ErrFull) when ctx ends first,
// and at once on any error but ErrFull.
//
// It waits as lock's AcquireWait does, woken by a release on the
// semaphore's channel, at the earliest live permit's expiry, or after the
// WithWaitBackoff fallback, whichever comes first. Waiters woken together
// race; fairness is not promised.
func (s *Issuer) AcquireWait(ctx context.Context, name string, capacity int, ttl time.Duration) (*Permit, error) {
	return s.core().AcquireWait(ctx, name, capacity, ttl,
		func(waiting bool) (*Permit, error) { return s.acquire(ctx, name, capacity, ttl, waiting) },
		func(err error) (time.Duration, bool) {
			var full *FullError
			if !errors.As(err, &full) {
				return 0, false
			}
			return full.Expires, true
		})
}
