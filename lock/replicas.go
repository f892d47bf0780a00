package lock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

// acquireReplicated runs the acquire script followed by WAIT
// (Script.RunWait). WAIT counts the replicas that have every write made on
// its own connection, so it must follow the script on the same
// connection, which the client's EvalWait promises.
func (l *Locker) acquireReplicated(ctx context.Context, lease *Lease, keys []string, args []any) (*Lease, error) {
	reply, acked, waitErr := acquireScript.RunWait(ctx, l.cfg.Client, keys, args, l.cfg.replicas, l.cfg.replicaTimeout)
	res, err := reply.Result()
	if err != nil {
		err = acquireTooOld(err)
		if leasecore.NoReply(err) {
			l.cfg.GiveBack(ctx, lease)
		}
		return nil, errs.Call(ctx, "acquire", lease.Name, err)
	}
	if waitErr != nil {
		// The acquire ran, and may have taken the lock: give back what it
		// took (a refusal, which names the holder, took nothing).
		if _, held := res.([]any); !held {
			l.cfg.GiveBack(ctx, lease)
		}
		return nil, errs.Call(ctx, "acquire", lease.Name, waitErr)
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

// extendReplicated runs the extend script followed by WAIT, as
// acquireReplicated does. A fail-closed Locker refuses an extension fewer
// replicas acknowledged: the lock stays extended on the primary, but the
// holder does not count on it, since a replica promoted without it lets
// the lock expire at the previous deadline.
func (l *Locker) extendReplicated(ctx context.Context, lease *Lease, ttl time.Duration) error {
	reply, acked, waitErr := extendScript.RunWait(ctx, l.cfg.Client, lease.keys[:1], []any{lease.value, ttl.Milliseconds()},
		l.cfg.replicas, l.cfg.replicaTimeout)
	n, err := reply.Int()
	if err != nil {
		return errs.Call(ctx, "extend", lease.Name, err)
	}
	if n != 1 {
		return errs.NotHeldError(lease.Name, lease.Token)
	}
	if waitErr != nil {
		return errs.Call(ctx, "extend", lease.Name, waitErr)
	}
	if acked < l.cfg.replicas && l.cfg.failClosed {
		return fmt.Errorf("%w: extend %q: %d of %d replicas within %v", ErrNotReplicated, lease.Name, acked, l.cfg.replicas, l.cfg.replicaTimeout)
	}
	return nil
}
