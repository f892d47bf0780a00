package ratelimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// batch.lua repeats policy.lua's arithmetic and reorders the log's
// writes; a slip in either decides differently from the per-decision
// scripts. On random traces (pinned times that jump ahead, stay put or go
// back, every algorithm and Policies of 1 to 3 limits, allow and take of
// 1 to 4, the same key many times in a batch, capacities small enough to
// reject often), each batch goes as one batch.lua call under one prefix
// and its decisions one by one, in order, with the rule's own script
// under another: every reply must be the same, byte for byte, and so must
// every key's state at the end.
func TestBatchScriptDecidesAsThePerDecisionScripts(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("BATCH_TRACE_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (BATCH_TRACE_SEED replays it)", seed)
	rng := rand.New(rand.NewPCG(1, seed))
	limit := func() Limit {
		n := 1 + rng.IntN(6)
		w := time.Duration(1+rng.IntN(4)) * 250 * time.Millisecond
		switch rng.IntN(3) {
		case 0:
			return SlidingLog(n, w)
		case 1:
			return SlidingCounter(n, w)
		}
		return GCRA(n, w, 1+rng.IntN(6))
	}
	// A few rules per trace, each always on the same keys, as a Limiter's
	// callers use them.
	var rules [][]Limit
	for len(rules) < 8 {
		var lims []Limit
		seen := map[string]bool{}
		for range 1 + rng.IntN(3) {
			if l := limit(); !seen[l.id] {
				seen[l.id] = true
				lims = append(lims, l)
			}
		}
		rules = append(rules, lims)
	}
	now := time.UnixMilli(1_750_000_000_000).UnixMicro()
	allKeys := map[string]bool{}
	decisions, admitted := 0, 0
	for b := range 300 {
		size := 2 + rng.IntN(40)
		var batched, single []luascripts.Call
		for range size {
			r := rng.IntN(len(rules))
			lims := rules[r]
			key := "k" + strconv.Itoa(rng.IntN(4)) + ":" + strconv.Itoa(r)
			m := modeAllow
			if rng.IntN(3) == 0 {
				m = modeTake
			}
			switch rng.IntN(4) {
			case 0:
				now += int64(rng.IntN(400_000))
			case 1:
				now -= int64(rng.IntN(50_000)) // the monotonic guard's case
			}
			n := 1 + rng.IntN(4)
			if _, err := check(key, Policy(lims), n, nil); err != nil {
				n = 1 // more than a limit can ever admit: Limiter refuses it before any script
			}
			for _, prefix := range []string{"batched:", "single:"} {
				req := newRequest(s.Prefix()+prefix, key, lims, m, n, itoa(now))
				call := luascripts.Call{Script: script(m, lims), Keys: req.keys, Args: req.args}
				if prefix == "batched:" {
					batched = append(batched, call)
					for _, k := range req.keys {
						allKeys[k[len(s.Prefix()+prefix):]] = true
					}
				} else {
					single = append(single, call)
				}
			}
		}
		// One transaction: the batch, its decisions one by one in order
		// (each sees the ones before), then PERSIST of every key. The keys'
		// TTLs run on the server's clock while the decisions run on pinned
		// times, and a key's expiry is not what this test compares; inside
		// one EXEC the server's clock stands still (Redis 7.0), so no key
		// of one copy expires between its write and its twin's. (Sent one
		// by one, a busy machine's singles outlasted a key of the batched
		// copy written 250 ms before them: a difference no script made.)
		all := append([]luascripts.Call{batchCall(batched, seq(len(batched)))}, single...)
		cmds := make([]*redis.Cmd, len(all))
		if _, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for i, call := range all {
				cmds[i] = p.Eval(ctx, call.Script.Source(), call.Keys, call.Args...)
			}
			for k := range allKeys {
				p.Persist(ctx, s.Prefix()+"batched:"+k)
				p.Persist(ctx, s.Prefix()+"single:"+k)
			}
			return nil
		}); err != nil {
			t.Fatalf("batch %d: %v", b, err)
		}
		again := splitReply(luascripts.Reply{Val: cmds[0].Val()}, batched, seq(len(batched)), nil)
		for i := range single {
			single[i].Reply = cmds[1+i].Val()
		}
		for i := range single {
			want, err := single[i].Result().Text()
			if err != nil {
				t.Fatalf("batch %d, decision %d alone: %v", b, i, err)
			}
			got, err := batched[i].Result().Text()
			if err != nil {
				t.Fatalf("batch %d, decision %d batched: %v (%d not made; alone: %q)", b, i, err, len(again), want)
			}
			if got != want {
				w, _ := decodeReply(want, len(single[i].Keys))
				g, _ := decodeReply(got, len(batched[i].Keys))
				t.Fatalf("batch %d, decision %d (%v on %s, args %q): batched %+v, alone %+v", b, i, batched[i].Args[1], single[i].Keys, batched[i].Args, g, w)
			}
			if r, _ := decodeReply(got, len(batched[i].Keys)); r.allowed {
				admitted++
			}
			decisions++
		}
	}
	for k := range allKeys {
		var got [2]any
		for i, prefix := range []string{"batched:", "single:"} {
			key := s.Prefix() + prefix + k
			typ, err := c.Type(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			switch typ {
			case "zset":
				got[i], err = c.ZRangeWithScores(ctx, key, 0, -1).Result()
			case "string":
				got[i], err = c.Get(ctx, key).Result()
			default:
				got[i] = typ
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if fmt.Sprint(got[0]) != fmt.Sprint(got[1]) {
			t.Fatalf("%s: batched %v, alone %v", k, got[0], got[1])
		}
	}
	t.Logf("%d decisions in 300 batches agree, %d admitted, on %d keys", decisions, admitted, len(allKeys))
	if admitted == 0 || admitted == decisions {
		t.Fatalf("%d of %d admitted: the trace tests only one outcome", admitted, decisions)
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// A batch may carry a key's decisions with a Reset or a Peek of the same
// key between them; batch.lua takes only decisions, so a key with another
// call keeps all its calls out of it, or the Reset would run after both
// Allows. In one batch: Allow, Reset, Allow, Peek, Allow on one key, and
// Allows of another key: each must see the calls before it.
func TestBatchKeepsAKeysOrderAcrossAResetInTheSameBatch(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	prefix := s.Prefix() + "rl:"
	lims := []Limit{SlidingCounter(10, time.Hour)}
	call := func(key string, m mode) luascripts.Call {
		req := newRequest(prefix, key, lims, m, 1, "")
		return luascripts.Call{Script: script(m, lims), Keys: req.keys, Args: req.args}
	}
	calls := []luascripts.Call{
		call("k", modeAllow), call("other", modeAllow), call("k", modeReset), call("other", modeAllow),
		call("k", modeAllow), call("k", modePeek), call("other", modeAllow), call("k", modeAllow),
	}
	sendBatch(ctx, goredisadapter.New(c), calls)
	want := map[int]int64{0: 9, 1: 9, 3: 8, 4: 9, 5: 9, 6: 7, 7: 8} // remaining after each
	for i, w := range want {
		packed, err := calls[i].Result().Text()
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		r, err := decodeReply(packed, 1)
		if err != nil {
			t.Fatal(err)
		}
		if r.limits[0].remaining != w {
			t.Errorf("call %d: remaining %d, want %d: the key's calls ran out of order", i, r.limits[0].remaining, w)
		}
	}
	if err := calls[2].Err; err != nil {
		t.Fatalf("reset: %v", err)
	}
}
