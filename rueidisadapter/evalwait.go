package rueidisadapter

import (
	"context"
	"time"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/luascripts"
)

// EvalWait sends call, then WAIT replicas timeout, in one round trip on
// one connection, and returns WAIT's answer: see luascripts.Client.
//
// rueidis sends a DoMulti that holds a blocking command (WAIT is one) on
// a connection of its own, taken from its pool of connections for
// blocking commands, so that WAIT counts the writes of the script's
// connection and no other call's. On a Cluster the two go on a dedicated
// connection to the node of the call's first key, which rueidis picks by
// its slot table: its DoMulti would follow a MOVED of the script alone,
// leaving WAIT on a connection that wrote nothing, whose WAIT every
// replica acknowledges at once. A MOVED or ASK is then the call's Err,
// which the runner sends again (luascripts' RunWait).
func (c *Client) EvalWait(ctx context.Context, call *luascripts.Call, replicas int, timeout time.Duration) (int, error) {
	call.Reply, call.Err = nil, nil
	if err := ctx.Err(); err != nil {
		call.Err = err
		return 0, err
	}
	_, bounded := ctx.Deadline()
	cmd, err := c.command(call, bounded)
	if err != nil {
		call.Err = err
		return 0, err
	}
	wait := c.rc.B().Wait().Numreplicas(int64(replicas)).Timeout(timeout.Milliseconds()).Build()
	if cmd.IsRetryable() {
		// Both again, or neither: rueidis sends a DoMulti again only
		// if all its commands may be; WAIT changes nothing.
		wait = wait.ToRetryable().Pin()
	}
	var res []rueidis.RedisResult
	if c.cluster {
		_ = c.rc.Dedicated(func(dc rueidis.DedicatedClient) error {
			res = dc.DoMulti(ctx, cmd, wait)
			return nil
		})
	} else {
		res = c.rc.DoMulti(ctx, cmd, wait)
	}
	settle(ctx, call, res[0])
	if _, err := outcome(ctx, false, res[1]); err != nil {
		return 0, err
	}
	n, err := res[1].AsInt64()
	return int(n), err
}
