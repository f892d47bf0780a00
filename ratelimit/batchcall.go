package ratelimit

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/luascripts"
)

// One script call per batch (ADR 0018): the decisions of a batch that go
// to one server, or one Cluster primary, are made by one call of
// batch.lua, which reads the clock once and pays the cost of a call (the
// command's parsing, the script's set-up, the reply) once for all of them.
// Everything else a batch carries (a Peek, a Reset, any script this file
// does not know) is sent as RunBatch sends it.

//go:embed batch.lua
var batchSource string

var batchScript = luascripts.NewWithoutAsk("batch.lua", batchSource)

// maxPerCall bounds the decisions of one batch.lua call: a larger group
// is split. It keeps one call's arguments and its time on the server
// bounded whatever WithBatching's size (64 GCRA decisions take the
// server about 0.1 ms).
const maxPerCall = 256

// batchExec returns the Exec that sends a batch on client: one batch.lua
// call per server for a Client, per primary for a ClusterClient; nil
// (RunBatch, a pipeline of one call per decision) for any other client.
// On a Cluster the Batcher itself splits a batch by primary and gives
// each node's calls, with that node's own pipeline, to the Exec
// (luascripts' bynode.go), so the calls an Exec gets are one node's; they
// are still grouped by MasterForKey here, the client's cached slot table
// (a hash and a lookup per call), so that a call placed by a slot table
// older than the Batcher's is not sent in another node's batch.lua call.
// A Ring places keys by a hash of its own that go-redis does not expose,
// so its decisions are not grouped; nor are those of a client this
// package does not know (a test double need not run Lua). Nor are those
// of a client adapter's client on a Cluster (rueidisadapter,
// valkeyadapter): its client routes each call by its slot and follows an
// ASK, which batch.lua must not (luascripts.NewWithoutAsk), so each
// decision goes as its own call, in the batch's pipeline.
func batchExec(client any) luascripts.Exec {
	switch c := client.(type) {
	case *redis.Client:
		if a := luascripts.AdapterOf(c); a != nil && a.Cluster() {
			return nil
		}
		return func(ctx context.Context, newPipeline func() redis.Pipeliner, calls []luascripts.Call) {
			sendBatch(ctx, newPipeline, calls, func(context.Context, string) (any, error) { return nil, nil })
		}
	case *redis.ClusterClient:
		node := func(ctx context.Context, key string) (any, error) { return c.MasterForKey(ctx, key) }
		return func(ctx context.Context, newPipeline func() redis.Pipeliner, calls []luascripts.Call) {
			sendBatch(ctx, newPipeline, calls, node)
		}
	}
	return nil
}

// isDecision reports whether s is a decision script that batch.lua makes
// the decisions of: a write (Allow, AllowN, Take) of any rule.
func isDecision(s *luascripts.Script) bool {
	return s == gcraScripts.write || s == counterScripts.write || s == logScripts.write || s == policyScripts.write
}

// A group is the decisions of a batch that one batch.lua call makes: the
// indexes of their calls, in arrival order.
type group struct {
	node  any
	calls []int
}

// sendBatch sends calls: the decisions of each node (node says which
// node owns a key) as one batch.lua call, the rest as they are, in one
// pipeline; then, one by one with RunBatch, the decisions of a batch.lua
// call the server refused (it refuses before any write; see batch.lua) or
// did not reach, and the others that a migrating slot refused.
func sendBatch(ctx context.Context, newPipeline func() redis.Pipeliner, calls []luascripts.Call, node func(context.Context, string) (any, error)) {
	// A user key with a call that is not a decision keeps all its calls
	// apart from batch.lua, so that its calls still run in arrival order.
	var apart map[string]bool
	for _, c := range calls {
		if !isDecision(c.Script) {
			if apart == nil {
				apart = map[string]bool{}
			}
			for _, k := range c.Keys {
				apart[hashTag(k)] = true
			}
		}
	}
	var groups []*group
	var alone []int
	for i, c := range calls {
		if !isDecision(c.Script) || len(c.Keys) == 0 || apart[hashTag(c.Keys[0])] {
			alone = append(alone, i)
			continue
		}
		n, err := node(ctx, c.Keys[0])
		if err != nil { // no slot table: let go-redis route the call itself
			alone = append(alone, i)
			continue
		}
		var g *group
		for _, h := range groups {
			if h.node == n && len(h.calls) < maxPerCall {
				g = h
				break
			}
		}
		if g == nil {
			g = &group{node: n}
			groups = append(groups, g)
		}
		g.calls = append(g.calls, i)
	}
	// A decision alone on its node costs less as its own script.
	batched := groups[:0]
	for _, g := range groups {
		if len(g.calls) == 1 {
			alone = append(alone, g.calls[0])
		} else {
			batched = append(batched, g)
		}
	}
	if len(batched) == 0 {
		luascripts.RunBatch(ctx, newPipeline, calls)
		return
	}

	sent := make([]luascripts.Call, 0, len(batched)+len(alone))
	for _, g := range batched {
		sent = append(sent, batchCall(calls, g.calls))
	}
	for _, i := range alone {
		sent = append(sent, calls[i])
	}
	luascripts.SendBatch(ctx, newPipeline, sent)

	var again []int
	for j, g := range batched {
		again = splitReply(ctx, sent[j].Cmd, calls, g.calls, again)
	}
	for j, i := range alone {
		cmd := sent[len(batched)+j].Cmd
		if luascripts.Migrating(cmd.Err()) {
			again = append(again, i)
			continue
		}
		calls[i].Cmd = cmd
	}
	if len(again) == 0 {
		return
	}
	// Again, one by one, in arrival order: a key's calls are all in one
	// group or all alone, so its order holds.
	retry := make([]luascripts.Call, len(again))
	sortInts(again)
	for j, i := range again {
		retry[j] = luascripts.Call{Script: calls[i].Script, Keys: calls[i].Keys, Args: calls[i].Args}
	}
	luascripts.RunBatch(ctx, newPipeline, retry)
	for j, i := range again {
		calls[i].Cmd = retry[j].Cmd
	}
}

// batchCall is the batch.lua call that makes the decisions idx of calls
// (see batch.lua for its arguments).
func batchCall(calls []luascripts.Call, idx []int) luascripts.Call {
	size := 0
	for _, i := range idx {
		size += 1 + len(calls[i].Keys) + len(calls[i].Args)
	}
	args := make([]any, 0, size)
	for _, i := range idx {
		c := calls[i]
		args = append(args, len(c.Keys))
		for _, k := range c.Keys {
			args = append(args, k)
		}
		args = append(args, c.Args...)
	}
	return luascripts.Call{Script: batchScript, Keys: calls[idx[0]].Keys[:1], Args: args}
}

// splitReply gives each call of idx its part of cmd, batch.lua's reply,
// and appends to again the calls to send one by one: all of them when the
// server refused the call (it wrote nothing), those after the ones made
// when an error stopped it part-way (the error is the next one's own).
// Any other error (the reply lost, a timeout) is every call's: each may
// or may not have been decided.
func splitReply(ctx context.Context, cmd *redis.Cmd, calls []luascripts.Call, idx []int, again []int) []int {
	packed, err := cmd.Text()
	var re redis.Error
	switch {
	case err == nil:
	case errors.As(err, &re) && !errors.Is(err, luascripts.ErrReplyLost):
		return append(again, idx...)
	default:
		for _, i := range idx {
			calls[i].Cmd = errCmd(ctx, err)
		}
		return again
	}
	fail := func(from int, err error) {
		for _, i := range idx[from:] {
			calls[i].Cmd = errCmd(ctx, err)
		}
	}
	if len(packed) < 8 {
		fail(0, fmt.Errorf("%s: unexpected reply %q", batchScript.Name(), packed))
		return again
	}
	made := int(binary.BigEndian.Uint64([]byte(packed[:8])))
	rest := packed[8:]
	if made > len(idx) {
		fail(0, fmt.Errorf("%s: %d decisions made of %d", batchScript.Name(), made, len(idx)))
		return again
	}
	for k, i := range idx[:made] {
		n := 8 * (2 + 4*len(calls[i].Keys))
		if len(rest) < n {
			fail(k, fmt.Errorf("%s: reply short of decision %d", batchScript.Name(), k+1))
			return again
		}
		c := redis.NewCmd(ctx)
		c.SetVal(rest[:n])
		calls[i].Cmd = c
		rest = rest[n:]
	}
	if made < len(idx) {
		calls[idx[made]].Cmd = errCmd(ctx, scriptError(rest))
		again = append(again, idx[made+1:]...)
	} else if rest != "" {
		fail(0, fmt.Errorf("%s: %d bytes after the last reply", batchScript.Name(), len(rest)))
	}
	return again
}

// A scriptError is a server's error that stopped batch.lua at a
// decision, given to that decision's call as the server's error reply.
type scriptError string

func (e scriptError) Error() string { return string(e) }

// RedisError marks it as the server's (redis.Error).
func (scriptError) RedisError() {}

func errCmd(ctx context.Context, err error) *redis.Cmd {
	c := redis.NewCmd(ctx)
	c.SetErr(err)
	return c
}

// hashTag is the part of key that Redis Cluster hashes: what the first
// "{...}" holds, when not empty; else the whole key. Every key of one
// user key's calls shares it (base).
func hashTag(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}

// sortInts sorts the few indexes of a batch's second round (an insertion
// sort: they come nearly sorted, group after group).
func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
