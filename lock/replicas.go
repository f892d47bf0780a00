package lock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// acquireReplicated runs the acquire script and WAIT in one pipeline. WAIT
// counts the replicas that have every write made on its own connection, so
// it must follow the script on the same connection, which a pipeline of a
// single-server client guarantees.
func (l *Locker) acquireReplicated(ctx context.Context, lease *Lease, keys []string, args []any) (*Lease, error) {
	var wait *redis.Cmd
	cmd := acquireScript.RunPipelined(ctx, l.client.Pipeline, keys, args, func(p redis.Pipeliner) {
		wait = p.Do(ctx, "WAIT", l.cfg.replicas, l.cfg.replicaTimeout.Milliseconds())
	})
	res, err := cmd.Result()
	if err != nil {
		err = acquireTooOld(err)
		if noReply(err) {
			l.cleanUp(lease)
		}
		return nil, wrap(ctx, "acquire", lease.Name, err)
	}
	acked, err := wait.Int()
	if err != nil {
		// The acquire may have succeeded: give back what it took.
		l.cleanUp(lease)
		return nil, wrap(ctx, "acquire", lease.Name, err)
	}
	if err := lease.acquired(res); err != nil {
		return nil, err
	}
	lease.Replicas = acked
	if acked >= l.cfg.replicas || !l.cfg.failClosed {
		return lease, nil
	}
	// Fail closed: give the lock back rather than hold one a failover may
	// forget.
	_, rerr := l.release(ctx, lease)
	err = fmt.Errorf("%w: %q: %d of %d replicas within %v", ErrNotReplicated, lease.Name, acked, l.cfg.replicas, l.cfg.replicaTimeout)
	if rerr != nil {
		err = fmt.Errorf("%w; releasing it: %w", err, rerr)
	}
	return nil, err
}

// extendReplicated runs the extend script and WAIT in one pipeline, as
// acquireReplicated does. A fail-closed Locker refuses an extension fewer
// replicas acknowledged: the lock stays extended on the primary, but the
// holder does not count on it, since a replica promoted without it lets
// the lock expire at the previous deadline.
func (l *Locker) extendReplicated(ctx context.Context, lease *Lease, ttl time.Duration) error {
	var wait *redis.Cmd
	cmd := extendScript.RunPipelined(ctx, l.client.Pipeline, lease.keys[:1], []any{lease.value, ttl.Milliseconds()}, func(p redis.Pipeliner) {
		wait = p.Do(ctx, "WAIT", l.cfg.replicas, l.cfg.replicaTimeout.Milliseconds())
	})
	n, err := cmd.Int()
	if err != nil {
		return wrap(ctx, "extend", lease.Name, err)
	}
	if n != 1 {
		return fmt.Errorf("%w: %q (token %d)", ErrNotHeld, lease.Name, lease.Token)
	}
	acked, err := wait.Int()
	if err != nil {
		return wrap(ctx, "extend", lease.Name, err)
	}
	if acked < l.cfg.replicas && l.cfg.failClosed {
		return fmt.Errorf("%w: extend %q: %d of %d replicas within %v", ErrNotReplicated, lease.Name, acked, l.cfg.replicas, l.cfg.replicaTimeout)
	}
	return nil
}
