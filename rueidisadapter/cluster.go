package rueidisadapter

import (
	"context"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/luascripts"
)

// On a Cluster, a batch goes in one DoMulti, which rueidis splits by the
// node of each command's slot and sends in parallel, following MOVED and
// ASK, and sending TRYAGAIN and CLUSTERDOWN again for retryable commands.
// Two kinds of batch cannot go that way:
//
//   - a call of a NoAsk script (luascripts.NewWithoutAsk) must not follow
//     an ASK, and rueidis follows every ASK. It goes on a dedicated
//     connection to its slot's node, which returns an ASK (and a MOVED,
//     which the runner sends again once rueidis has refreshed its slot
//     table) as it came;
//   - a call without keys has no slot, and rueidis refuses (panics on) a
//     DoMulti that mixes one with calls of several slots. It goes in a
//     DoMulti of its own, which sends it to a primary.
//
// Such a batch is sent in runs, one after the other, so that a node gets
// its calls in their order: each run of calls that are not NoAsk in one
// DoMulti (or two: with keys, then without), and each run of NoAsk calls
// of one slot on one dedicated connection.

// needsSplit reports whether calls (their commands cmds, where built)
// cannot go in one DoMulti of the Cluster client.
func needsSplit(calls []luascripts.Call, cmds []rueidis.Completed, built []bool) bool {
	slots, anyKeyless := 0, false
	var first uint16
	for i := range calls {
		if !built[i] {
			continue
		}
		if calls[i].Script.NoAsk() {
			return true
		}
		switch s := cmds[i].Slot(); {
		case len(calls[i].Keys) == 0:
			anyKeyless = true
		case slots == 0:
			slots, first = 1, s
		case s != first:
			slots = 2
		}
	}
	return anyKeyless && slots > 1
}

// evalSplit sends calls in runs (see above).
func (c *Client) evalSplit(ctx context.Context, calls []luascripts.Call, cmds []rueidis.Completed, built []bool) {
	noAsk := func(i int) bool { return built[i] && calls[i].Script.NoAsk() }
	for i := 0; i < len(calls); {
		j := i + 1
		if noAsk(i) {
			for j < len(calls) && noAsk(j) && cmds[j].Slot() == cmds[i].Slot() {
				j++
			}
			c.evalDedicated(ctx, calls[i:j], cmds[i:j], built[i:j])
		} else {
			for j < len(calls) && !noAsk(j) {
				j++
			}
			c.evalMixed(ctx, calls[i:j], cmds[i:j], built[i:j])
		}
		i = j
	}
}

// evalMixed sends calls that are not NoAsk: those with keys in one
// DoMulti, then those without in another, when they cannot go together.
func (c *Client) evalMixed(ctx context.Context, calls []luascripts.Call, cmds []rueidis.Completed, built []bool) {
	if !needsSplit(calls, cmds, built) {
		c.evalOn(ctx, c.rc, calls, cmds, built)
		return
	}
	keyed, none := make([]bool, len(calls)), make([]bool, len(calls))
	for i := range calls {
		keyed[i] = built[i] && len(calls[i].Keys) > 0
		none[i] = built[i] && len(calls[i].Keys) == 0
	}
	c.evalOn(ctx, c.rc, calls, cmds, keyed)
	c.evalOn(ctx, c.rc, calls, cmds, none)
}

// evalDedicated sends calls, of one slot, on a dedicated connection to
// that slot's node, which follows no redirect.
func (c *Client) evalDedicated(ctx context.Context, calls []luascripts.Call, cmds []rueidis.Completed, built []bool) {
	_ = c.rc.Dedicated(func(dc rueidis.DedicatedClient) error {
		c.evalOn(ctx, dc, calls, cmds, built)
		return nil
	})
}
