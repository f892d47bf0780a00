package lock

import (
	"context"
	"time"

	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

// Keeper renews a lease in the background and says, through its Context,
// the moment the lease can no longer be proven. WithLock uses one; use it
// directly to hold a lease for longer than one function call (a leader's
// term, say).
//
// The rule it enforces: the lease is trusted until its local deadline, the
// time the last successful acquire or renewal was sent (monotonic clock)
// plus the TTL minus the safety margin. A renewal that finds the lock gone
// ends it at once. A renewal that fails for any other reason (a timeout, a
// refused connection) is retried until that deadline and no longer.
type Keeper struct {
	core  *leasecore.Keeper
	lease Lease // as given to Keep; its RequestedAt is the core's
}

// Keep starts renewing lease every interval, each time for the lease's TTL,
// until Stop, until ctx ends or until the lease is lost. lease itself is not
// modified: Keeper.Lease returns the renewed copy. Keep does not release the
// lock when it ends; call Release.
//
// interval must be at least a millisecond (the server keeps expiries in
// whole milliseconds) and shorter than the TTL minus the safety margin, or
// Keep returns ErrInvalidTTL. A third of the TTL leaves two chances to
// renew before the deadline.
//
// A lease with less than one interval left before its deadline is renewed
// before Keep returns; if that renewal fails, Keep returns an error matching
// ErrLeaseLost and the caller must not act as the holder.
func (l *Locker) Keep(ctx context.Context, lease *Lease, interval time.Duration) (*Keeper, error) {
	core, err := l.core().Keep(ctx, lease, interval)
	if err != nil {
		return nil, err
	}
	return &Keeper{core: core, lease: *lease}, nil
}

// Context returns a context derived from the one given to Keep. It is
// cancelled when the lease is lost, with a cause that matches ErrLeaseLost
// (see context.Cause), and also when Stop is called or the parent ends. A
// zero Keeper's is cancelled, with a cause matching ErrInvalidLease.
func (k *Keeper) Context() context.Context {
	if k == nil || k.core == nil {
		return errs.NotKeptContext()
	}
	return k.core.Context()
}

// Lease returns the lease as last renewed: RequestedAt and TTL are those of
// the latest successful renewal. A zero Keeper's is zero.
func (k *Keeper) Lease() Lease {
	if k == nil || k.core == nil {
		return Lease{}
	}
	l := k.lease
	l.RequestedAt = k.core.Sent()
	return l
}

// Deadline returns the local deadline of the lease as last renewed; zero
// for a zero Keeper.
func (k *Keeper) Deadline() time.Time {
	if k == nil || k.core == nil {
		return time.Time{}
	}
	return k.core.Deadline()
}

// Err returns nil while the lease is held, and why it was lost after. The
// error matches ErrLeaseLost, and either ErrNotHeld (a renewal found the lock
// gone) or ErrDeadline; with ErrDeadline it also wraps the last renewal's
// error if one failed (Redis unreachable), and none if no renewal came back
// at all (a frozen server, or this process paused). A zero Keeper's
// matches ErrInvalidLease, as its Stop's.
func (k *Keeper) Err() error {
	if k == nil || k.core == nil {
		return errs.NotKept()
	}
	return k.core.Err()
}

// Stop ends the renewals, waits for the renewal goroutine to exit and
// returns Err. It does not release the lock. It is safe to call more than
// once. A zero Keeper's matches ErrInvalidLease.
func (k *Keeper) Stop() error {
	if k == nil || k.core == nil {
		return errs.NotKept()
	}
	return k.core.Stop()
}
