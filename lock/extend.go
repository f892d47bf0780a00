package lock

import (
	"context"
	_ "embed"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

//go:embed extend.lua
var extendSource string

// extendScript may run twice for one call: a second run gives the lock the
// same TTL again, and answers as the first did.
var extendScript = luascripts.NewIdempotent("lock/extend.lua", extendSource)

// Extend sets the lease's TTL to ttl, counted from now, if and only if
// lease still holds the lock. It never recreates an expired lock and never
// touches another holder's: then it returns ErrNotHeld. On success it sets
// lease.TTL and lease.RequestedAt (the time the extend was sent).
//
// Under WithReplicas it waits for the replicas as Acquire does; when fewer
// acknowledge, a fail-closed Locker returns an error matching
// ErrNotReplicated and leaves the lease as it was: a failover to a replica
// that missed the extension would keep the lock only until the previous
// deadline.
func (l *Locker) Extend(ctx context.Context, lease *Lease, ttl time.Duration) error {
	return l.core().Extend(ctx, lease, ttl)
}

// extendScript runs extend.lua for lease, followed by WAIT under
// WithReplicas (see extendReplicated). It does not touch the lease: the
// Keeper's goroutine runs it.
func (l *Locker) extendScript(ctx context.Context, lease *Lease, ttl time.Duration) (time.Time, error) {
	if l.cfg.replicas > 0 {
		return time.Time{}, l.extendReplicated(ctx, lease, ttl)
	}
	n, err := l.run(ctx, lease.Name, extendScript, lease.keys[:1], lease.value, ttl.Milliseconds()).Int()
	if err != nil {
		return time.Time{}, errs.Call(ctx, "extend", lease.Name, err)
	}
	if n != 1 {
		return time.Time{}, errs.NotHeldError(lease.Name, lease.Token)
	}
	return time.Time{}, nil
}

// Extended records an Extend for ttl sent at sent.
func (kind) Extended(lease *Lease, sent time.Time, ttl time.Duration) {
	lease.RequestedAt, lease.TTL = sent, ttl
}
