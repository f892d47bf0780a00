package luascripts

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// A batch for a Redis Cluster is split by the Batcher itself, into one
// pipeline per primary, rather than by go-redis's cluster pipeline: when
// the first command of a node's part meets TRYAGAIN (a multi-key call
// whose slot migrates), that pipeline sends the node's whole part again,
// commands that ran included, and a command of the part that met ASK at
// the same time goes to two nodes at once (measured: a data race on the
// command under -race during a live resharding, go-redis v9.23). A
// node's own pipeline retries nothing but a broken connection, which the
// sends at most once handle (once.go); the calls a migration refused are
// sent again here, one by one, through the cluster client, which follows
// the redirect.

// nodeBatchKey marks the context of a batch sent to one node: RunBatch
// leaves the calls a migration refused to runByNode.
type nodeBatchKey struct{}

// runByNode sends calls, one pipeline per primary of cc, in parallel, with
// exec, then again, alone through cc, the calls a migration refused and
// those whose node is not known.
func runByNode(ctx context.Context, cc *redis.ClusterClient, exec Exec, calls []Call) {
	groups := map[*redis.Client][]int{}
	var nodes []*redis.Client
	for i := range calls {
		if len(calls[i].Keys) == 0 {
			continue // no slot: sent alone below
		}
		node, err := cc.MasterForKey(ctx, calls[i].Keys[0])
		if err != nil {
			continue // no state yet, or a slot no node serves: alone below
		}
		if _, ok := groups[node]; !ok {
			nodes = append(nodes, node)
		}
		groups[node] = append(groups[node], i)
	}
	nodeCtx := context.WithValue(ctx, nodeBatchKey{}, true)
	send := func(node *redis.Client) {
		idx := groups[node]
		part := make([]Call, len(idx))
		for j, i := range idx {
			part[j] = calls[i]
		}
		exec(nodeCtx, node.Pipeline, part)
		for j, i := range idx {
			calls[i].Cmd = part[j].Cmd
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
	// Again, alone: each key's calls in their order, the keys in parallel,
	// since a call waits out its slot's migration (migrate.go) and the
	// batch's other calls need not wait for it.
	again := map[string][]int{}
	var keys []string
	for i := range calls {
		if c := &calls[i]; c.Cmd == nil || migrating(c.Cmd.Err()) {
			k := ""
			if len(c.Keys) > 0 {
				k = c.Keys[0]
			}
			if _, ok := again[k]; !ok {
				keys = append(keys, k)
			}
			again[k] = append(again[k], i)
		}
	}
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Go(func() {
			for _, i := range again[k] {
				c := &calls[i]
				c.Cmd = c.Script.Run(ctx, cc, c.Keys, c.Args...)
			}
		})
	}
	wg.Wait()
}
