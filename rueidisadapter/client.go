package rueidisadapter

import (
	"context"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/luascripts"
)

// Client runs the primitives' calls on a rueidis client. Make it with New;
// it is safe for concurrent use.
type Client struct {
	rc      rueidis.Client
	cluster bool // rc routes each command by its slot itself
}

// New returns the primitives' client on rc: a client of one server, of a
// Sentinel-monitored primary or of a Cluster. Pass it to any primitive's
// constructor. The calls run on rc's own connections and options; closing
// rc ends them.
//
// New(nil) is nil, which each primitive's constructor refuses with its
// ErrNilClient.
func New(rc rueidis.Client) *Client {
	if luascripts.IsNil(rc) {
		return nil
	}
	return &Client{rc: rc, cluster: rc.Mode() == rueidis.ClientModeCluster}
}

// Eval sends calls in one DoMulti, which rueidis splits by node on a
// Cluster (but for the batches of cluster.go), and sets each call's
// outcome: see luascripts.Client.
func (c *Client) Eval(ctx context.Context, calls []luascripts.Call) {
	if err := ctx.Err(); err != nil {
		for i := range calls {
			calls[i].Reply, calls[i].Err = nil, err
		}
		return
	}
	_, bounded := ctx.Deadline()
	if len(calls) == 1 && !(c.cluster && calls[0].Script.NoAsk()) { // the common case, without DoMulti's slices
		cmd, err := c.command(&calls[0], bounded)
		if err != nil {
			calls[0].Reply, calls[0].Err = nil, err
			return
		}
		settle(ctx, &calls[0], c.do(ctx, cmd, len(calls[0].Keys) == 0))
		return
	}
	cmds := make([]rueidis.Completed, len(calls))
	built := make([]bool, len(calls))
	for i := range calls {
		cmd, err := c.command(&calls[i], bounded)
		if err != nil {
			calls[i].Reply, calls[i].Err = nil, err
			continue
		}
		cmds[i], built[i] = cmd, true
	}
	if c.cluster && needsSplit(calls, cmds, built) {
		c.evalSplit(ctx, calls, cmds, built)
		return
	}
	c.evalOn(ctx, c.rc, calls, cmds, built)
}

// A multiClient sends a DoMulti: the client, or a dedicated connection of
// it. (rueidis.CommandClient says the same, but only from v1.0.7x; this
// module supports v1.0.69.)
type multiClient interface {
	DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult
}

// evalOn sends the built commands of calls in one DoMulti of cc and sets
// their calls' outcomes.
func (c *Client) evalOn(ctx context.Context, cc multiClient, calls []luascripts.Call, cmds []rueidis.Completed, built []bool) {
	multi := make([]rueidis.Completed, 0, len(cmds))
	for i := range cmds {
		if built[i] {
			multi = append(multi, cmds[i])
		}
	}
	if len(multi) == 0 {
		return
	}
	res := cc.DoMulti(ctx, multi...)
	j := 0
	for i := range calls {
		if built[i] {
			settle(ctx, &calls[i], res[j])
			j++
		}
	}
}

// do sends cmd alone. On a Cluster, a command without keys (keyless)
// goes in a DoMulti, which sends it to a primary: rueidis's Do sends it to
// any node it knows, a replica too.
func (c *Client) do(ctx context.Context, cmd rueidis.Completed, keyless bool) rueidis.RedisResult {
	if c.cluster && keyless {
		return c.rc.DoMulti(ctx, cmd)[0]
	}
	return c.rc.Do(ctx, cmd)
}

// Primary is "" for a client of one server (or of a Sentinel-monitored
// primary), and luascripts.ErrNoRoute on a Cluster: rueidis routes each
// command by its slot and does not expose its slot table.
func (c *Client) Primary(ctx context.Context, key string) (string, error) {
	if c.cluster {
		return "", luascripts.ErrNoRoute
	}
	return "", nil
}

// The contract, checked at build time.
var _ luascripts.Client = (*Client)(nil)
