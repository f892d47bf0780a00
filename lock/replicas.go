package lock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/luascripts"
)

// acquireReplicated runs the acquire script and WAIT in one pipeline. WAIT
// counts the replicas that have every write made on its own connection, so
// it must follow the script on the same connection, which a pipeline of a
// single-server client guarantees.
func (l *Locker) acquireReplicated(ctx context.Context, lease *Lease, args []any) (*Lease, error) {
	s := luascripts.LockAcquire
	keys := lease.keys[:]
	lease.RequestedAt = time.Now()
	res, acked, err := l.pipeWait(ctx, func(p redis.Pipeliner) *redis.Cmd { return p.EvalSha(ctx, s.SHA1(), keys, args...) })
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		// The script did not run; send its source this once.
		res, acked, err = l.pipeWait(ctx, func(p redis.Pipeliner) *redis.Cmd { return p.Eval(ctx, s.Source(), keys, args...) })
	}
	if err != nil {
		return nil, wrap(ctx, "acquire", lease.Name, err)
	}
	if err := acquired(lease, res); err != nil {
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

func (l *Locker) pipeWait(ctx context.Context, script func(redis.Pipeliner) *redis.Cmd) (any, int, error) {
	p := l.client.Pipeline()
	cmd := script(p)
	wait := p.Do(ctx, "WAIT", l.cfg.replicas, l.cfg.replicaTimeout.Milliseconds())
	_, _ = p.Exec(ctx) // errors are read per command below
	res, err := cmd.Result()
	if err != nil {
		return nil, 0, err
	}
	n, err := wait.Int()
	if err != nil {
		return nil, 0, err
	}
	return res, int(n), nil
}
