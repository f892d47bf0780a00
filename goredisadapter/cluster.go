package goredisadapter

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/luascripts"
)

// A batch for a Redis Cluster is split here, into one pipeline per
// primary, rather than by go-redis's cluster pipeline: when the first
// command of a node's part meets TRYAGAIN (a multi-key call whose slot
// migrates), that pipeline sends the node's whole part again, commands
// that ran included, and a command of the part that met ASK at the same
// time goes to two nodes at once (measured: a data race on the command
// under -race during a live resharding, go-redis v9.23). A node's own
// pipeline retries nothing but a broken connection, which the sends at
// most once handle (once.go). The calls a node redirected (MOVED, ASK)
// are sent again here, each alone, through the cluster client, which
// follows the redirect; a TRYAGAIN is left to the runner, which sends the
// call again once the migration lets it (luascripts.Send).

// evalByNode sends calls, one pipeline per primary of the cluster, in
// parallel; then again, alone through the cluster client, the calls a
// node redirected and those whose node is not known.
func (c *Client) evalByNode(ctx context.Context, calls []luascripts.Call) {
	groups := map[*redis.Client][]int{}
	var nodes []*redis.Client
	var alone []int
	for i := range calls {
		if len(calls[i].Keys) == 0 {
			alone = append(alone, i) // no slot: any node
			continue
		}
		node, err := c.cluster.MasterForKey(ctx, calls[i].Keys[0])
		if err != nil {
			alone = append(alone, i) // no state yet, or a slot no node serves
			continue
		}
		if _, ok := groups[node]; !ok {
			nodes = append(nodes, node)
		}
		groups[node] = append(groups[node], i)
	}
	send := func(node *redis.Client) {
		idx := groups[node]
		part := make([]luascripts.Call, len(idx))
		for j, i := range idx {
			part[j] = calls[i]
		}
		c.evalOn(ctx, node.Pipeline(), false, part)
		for j, i := range idx {
			calls[i] = part[j]
		}
	}
	if len(nodes) == 1 {
		send(nodes[0])
	} else {
		var wg sync.WaitGroup
		for _, node := range nodes {
			wg.Go(func() { send(node) })
		}
		wg.Wait()
	}
	redirected := false
	for i := range calls {
		if moved(calls[i].Err) && !(calls[i].Script.NoAsk() && asked(calls[i].Err)) {
			alone, redirected = append(alone, i), true
		}
	}
	if redirected {
		c.cluster.ReloadState(ctx) // the slot table is behind
	}
	c.evalAlone(ctx, calls, alone)
}

// evalAlone sends the calls at idx one at a time through the cluster
// client (each a pipeline of one, which follows MOVED and ASK): each key's
// calls in their order, the keys in parallel.
func (c *Client) evalAlone(ctx context.Context, calls []luascripts.Call, idx []int) {
	if len(idx) == 0 {
		return
	}
	byKey := map[string][]int{}
	var keys []string
	for _, i := range idx {
		k := ""
		if len(calls[i].Keys) > 0 {
			k = calls[i].Keys[0]
		}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], i)
	}
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Go(func() {
			for _, i := range byKey[k] {
				calls[i].Reply, calls[i].Err = nil, nil
				c.evalOn(ctx, c.pipeline(), true, calls[i:i+1])
			}
		})
	}
	wg.Wait()
}

// asked reports whether err is an ASK redirect.
func asked(err error) bool {
	msg, ok := luascripts.ReplyMessage(err)
	return ok && len(msg) > 4 && msg[:4] == "ASK "
}
