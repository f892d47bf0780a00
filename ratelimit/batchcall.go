package ratelimit

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis-primitives/go/internal/luascripts"
)

// One script call per batch (ADR 0018): the decisions of a batch that go
// to one server, or one Cluster primary, are made by one call of
// batch.lua, which reads the clock once and pays the cost of a call (the
// command's parsing, the script's set-up, the reply) once for all of them.
// Everything else a batch carries (a Peek, a Reset, any script this file
// does not know) is sent as it is, in the same round.
//
// Decisions are grouped by the primary the client names for their keys
// (Client.Primary): one group on one server; per primary on a Cluster, by
// the client's cached slot table (a hash and a lookup per call). A
// batch.lua call goes where its first key routes it; should another of
// its keys be served elsewhere by then (the table was behind), the node
// refuses the call before it writes anything (see batch.lua), and its
// decisions go one by one. A client that cannot tell (ErrNoRoute: a Ring,
// which places keys by a hash of its own that go-redis does not expose,
// or a client that routes each call itself and may follow an ASK, which
// batch.lua must not: luascripts.NewWithoutAsk) has each of its decisions
// sent as its own call.

//go:embed batch.lua
var batchSource string

var batchScript = luascripts.NewWithoutAsk("batch.lua", batchSource)

// maxPerCall bounds the decisions of one batch.lua call: a larger group
// is split. It keeps one call's arguments and its time on the server
// bounded whatever WithBatching's size (64 GCRA decisions take the
// server about 0.1 ms).
const maxPerCall = 256

// isDecision reports whether s is a decision script that batch.lua makes
// the decisions of: a write (Allow, AllowN, Take) of any rule.
func isDecision(s *luascripts.Script) bool {
	return s == gcraScripts.write || s == counterScripts.write || s == logScripts.write || s == policyScripts.write
}

// A group is the decisions of a batch that one batch.lua call makes: the
// indexes of their calls, in arrival order.
type group struct {
	primary string
	calls   []int
}

// sendBatch is WithBatching's Exec. It sends calls on client in one round
// (Client.Eval: one round trip per server): the decisions of each primary
// as one batch.lua call, the rest as they are; those the server answered
// NOSCRIPT once more with their source. Then, one by one with
// luascripts.Send, it sends the decisions of a batch.lua call the server
// refused (it refuses before any write; see batch.lua) or did not reach,
// and the others that a migrating slot refused.
func sendBatch(ctx context.Context, client luascripts.Client, calls []luascripts.Call) {
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
	route := true // false once the client said it cannot tell
	// A head is made here only to check it can be (appendHead); batchCall
	// makes them all again in one buffer.
	scratch := make([]byte, 0, headLen+4*len(packedLimit{}))
	for i, c := range calls {
		var ok bool
		if scratch, ok = appendHead(scratch[:0], c); !route || !isDecision(c.Script) || !ok || len(c.Keys) == 0 || apart[hashTag(c.Keys[0])] {
			alone = append(alone, i)
			continue
		}
		p, err := client.Primary(ctx, c.Keys[0])
		if err != nil {
			// ErrNoRoute: it never can. Otherwise (no slot table yet, a
			// slot no node serves) the client routes the call itself.
			route = !errors.Is(err, luascripts.ErrNoRoute)
			alone = append(alone, i)
			continue
		}
		var g *group
		for _, h := range groups {
			if h.primary == p && len(h.calls) < maxPerCall {
				g = h
				break
			}
		}
		if g == nil {
			g = &group{primary: p}
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
		luascripts.Send(ctx, client, calls)
		return
	}

	sent := make([]luascripts.Call, 0, len(batched)+len(alone))
	for _, g := range batched {
		sent = append(sent, batchCall(calls, g.calls))
	}
	for _, i := range alone {
		sent = append(sent, luascripts.Call{Script: calls[i].Script, Keys: calls[i].Keys, Args: calls[i].Args})
	}
	// Once: a refused batch.lua call falls back to its decisions at once
	// instead of being sent whole again.
	luascripts.SendOnce(ctx, client, sent)

	var again []int
	for j, g := range batched {
		again = splitReply(sent[j].Result(), calls, g.calls, again)
	}
	for j, i := range alone {
		c := &sent[len(batched)+j]
		if luascripts.Migrating(c.Err) {
			again = append(again, i)
			continue
		}
		calls[i].Reply, calls[i].Err = c.Reply, c.Err
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
	luascripts.Send(ctx, client, retry)
	for j, i := range again {
		calls[i].Reply, calls[i].Err = retry[j].Reply, retry[j].Err
	}
}

// batchCall is the batch.lua call that makes the decisions idx of calls
// (see batch.lua for its arguments); each call must have a head
// (appendHead). The heads are packed in one buffer, and each is a part of
// one string: two allocations a call, not two a decision.
func batchCall(calls []luascripts.Call, idx []int) luascripts.Call {
	size, bytes := 0, 0
	for _, i := range idx {
		size += 1 + len(calls[i].Keys)
		bytes += headLen + len(packedLimit{})*len(calls[i].Keys)
	}
	buf := make([]byte, 0, bytes)
	ends := make([]int, len(idx))
	for j, i := range idx {
		buf, _ = appendHead(buf, calls[i])
		ends[j] = len(buf)
	}
	heads := string(buf)
	args := make([]any, 0, size)
	start := 0
	for j, i := range idx {
		args = append(args, heads[start:ends[j]])
		start = ends[j]
		for _, k := range calls[i].Keys {
			args = append(args, k)
		}
	}
	return luascripts.Call{Script: batchScript, Keys: calls[idx[0]].Keys[:1], Args: args}
}

// headLen is the length of a head before its limits.
const headLen = 18

// appendHead appends to dst a decision's own ARGV (wire.go: n, mode, a
// pinned time or empty, the packed limits) packed as one argument of
// batch.lua, its head: the number of limits (1 byte), the mode's first
// letter, n and the pinned time ('>i8' each, -1 when not pinned), then the
// packed limits. One argument instead of 3 + m, and numbers the script
// unpacks instead of parsing text: each argument costs the server its
// parsing and a Lua string, and a number parsed from text (tonumber) about
// 800 instructions. ok is false, and dst returned as it was, for
// arguments wire.go does not make, which the call then keeps to itself.
func appendHead(dst []byte, c luascripts.Call) (_ []byte, ok bool) {
	if len(c.Args) != 3+len(c.Keys) || len(c.Keys) > 255 {
		return dst, false
	}
	n, ok1 := c.Args[0].(int)
	mode, ok2 := c.Args[1].(string)
	pinned, ok3 := c.Args[2].(string)
	if !ok1 || !ok2 || !ok3 || mode == "" {
		return dst, false
	}
	at := int64(-1)
	if pinned != "" {
		v, err := strconv.ParseInt(pinned, 10, 64)
		if err != nil || v < 0 {
			return dst, false
		}
		at = v
	}
	b := append(dst, byte(len(c.Keys)), mode[0])
	b = binary.BigEndian.AppendUint64(b, uint64(n))
	b = binary.BigEndian.AppendUint64(b, uint64(at))
	for _, a := range c.Args[3:] {
		switch l := a.(type) {
		case []byte:
			b = append(b, l...)
		case string:
			b = append(b, l...)
		default:
			return dst[:len(dst):len(dst)], false
		}
	}
	return b, true
}

// splitReply gives each call of idx its part of out, batch.lua's outcome,
// and appends to again the calls to send one by one: all of them when the
// server refused the call (it wrote nothing), those after the ones made
// when an error stopped it part-way (the error is the next one's own).
// Any other error (the reply lost, a timeout) is every call's: each may
// or may not have been decided.
func splitReply(out luascripts.Reply, calls []luascripts.Call, idx []int, again []int) []int {
	packed, err := out.Text()
	if err != nil {
		if _, refused := luascripts.ReplyMessage(err); refused && !errors.Is(err, luascripts.ErrReplyLost) {
			return append(again, idx...)
		}
		for _, i := range idx {
			calls[i].Reply, calls[i].Err = nil, err
		}
		return again
	}
	fail := func(from int, err error) {
		for _, i := range idx[from:] {
			calls[i].Reply, calls[i].Err = nil, err
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
		calls[i].Reply, calls[i].Err = rest[:n], nil
		rest = rest[n:]
	}
	if made < len(idx) {
		calls[idx[made]].Reply, calls[idx[made]].Err = nil, &luascripts.ReplyError{Message: rest, Err: scriptError(rest)}
		again = append(again, idx[made+1:]...)
	} else if rest != "" {
		fail(0, fmt.Errorf("%s: %d bytes after the last reply", batchScript.Name(), len(rest)))
	}
	return again
}

// A scriptError is a server's error that stopped batch.lua at a
// decision, given to that decision's call as the server's error reply
// (a *luascripts.ReplyError around it), as the decision's own call would
// have had it.
type scriptError string

func (e scriptError) Error() string { return string(e) }

// RedisError marks it as a server's error, which a go-redis user matches
// with redis.Error, as on a decision's own call through goredisadapter.
func (scriptError) RedisError() {}

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
