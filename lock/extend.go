package lock

import (
	"context"
	_ "embed"
	"fmt"
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
	if err := checkLease(lease); err != nil {
		return err
	}
	ttl, err := l.checkTTL(ttl)
	if err != nil {
		return err
	}
	sent := time.Now()
	if err := l.extend(ctx, lease, ttl); err != nil {
		return err
	}
	lease.RequestedAt, lease.TTL = sent, ttl
	return nil
}

// extend is Extend without touching the lease, for the Keeper's goroutine.
func (l *Locker) extend(ctx context.Context, lease *Lease, ttl time.Duration) error {
	var start time.Time
	if l.cfg.on() {
		start = time.Now()
	}
	err := l.extendOnce(ctx, lease, ttl)
	if l.cfg.on() {
		l.extendEvent(ctx, lease, start, err)
	}
	return err
}

func (l *Locker) extendOnce(ctx context.Context, lease *Lease, ttl time.Duration) error {
	if l.cfg.replicas > 0 {
		return l.extendReplicated(ctx, lease, ttl)
	}
	n, err := l.run(ctx, lease.Name, extendScript, lease.keys[:1], lease.value, ttl.Milliseconds()).Int()
	if err != nil {
		return wrap(ctx, "extend", lease.Name, err)
	}
	if n != 1 {
		return fmt.Errorf("%w: %q (token %d)", ErrNotHeld, lease.Name, lease.Token)
	}
	return nil
}
