package lock

import (
	"context"
	"errors"
	"time"
)

// AcquireWait acquires name for ttl, waiting for as long as ctx allows while
// someone else holds it. It returns as soon as it acquires, with an error
// matching ctx's (and ErrHeld) when ctx ends first, and at once on any error
// other than ErrHeld (a connection failure, say).
//
// It does not poll in a loop: after a refusal it subscribes to the name's
// release channel, and each later attempt that is refused marks the lock so
// that its release is published there (see the package doc); it tries again
// when a release is announced, when the holder's lease expires (the refusal
// says when), or, as a fallback for a missed notification, after a jittered
// backoff (see WithWaitBackoff), whichever comes first. Waiters that wake
// together race with one Acquire each; one wins. Fairness is not promised.
// The subscription ends before AcquireWait returns.
func (l *Locker) AcquireWait(ctx context.Context, name string, ttl time.Duration) (*Lease, error) {
	return l.core().AcquireWait(ctx, name, 1, ttl,
		func(waiting bool) (*Lease, error) { return l.acquire(ctx, name, ttl, waiting) },
		func(err error) (time.Duration, bool) {
			var held *HeldError
			if !errors.As(err, &held) {
				return 0, false
			}
			return held.TTL, true
		})
}
