package semaphore

import (
	"context"
	"time"

	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

// Keeper renews a permit in the background and says, through its Context,
// the moment the permit can no longer be proven. WithPermit uses one; use
// it directly when the permit must outlive one function call (a request
// whose handler runs elsewhere, a worker's whole job). It follows the rule
// of lock's Keeper: the permit is trusted until its local deadline
// (Permit.Deadline with the safety margin), retried until then.
type Keeper struct {
	core *leasecore.Keeper
}

// Keep starts renewing p every interval, each time for p's TTL, until Stop,
// until ctx ends or until the permit is lost. p itself is not modified.
// Keep does not release the permit when it ends; call Release.
//
// interval must be at least a millisecond (the server keeps expiries in
// whole milliseconds) and shorter than the TTL minus the safety margin
// (ErrInvalidTTL). A permit with less than one interval left is
// renewed before Keep returns, as lock's Keep does; if that fails, Keep
// returns an error matching ErrPermitLost: do not act as the holder.
func (s *Issuer) Keep(ctx context.Context, p *Permit, interval time.Duration) (*Keeper, error) {
	core, err := s.core().Keep(ctx, p, interval)
	if err != nil {
		return nil, err
	}
	return &Keeper{core: core}, nil
}

// Context returns a context derived from the one given to Keep, cancelled
// when the permit is lost with a cause matching ErrPermitLost (see
// context.Cause), and also when Stop is called or the parent ends. A zero
// Keeper's is cancelled, with a cause matching ErrInvalidPermit.
func (k *Keeper) Context() context.Context {
	if k == nil || k.core == nil {
		return errs.NotKeptContext()
	}
	return k.core.Context()
}

// Stop ends the renewals, waits for the renewal goroutine to exit and
// returns why the permit was lost (matching ErrPermitLost and ErrNotHeld
// or ErrDeadline), or nil. It does not release the permit; it is safe to
// call more than once. A zero Keeper's matches ErrInvalidPermit.
func (k *Keeper) Stop() error {
	if k == nil || k.core == nil {
		return errs.NotKept()
	}
	return k.core.Stop()
}
