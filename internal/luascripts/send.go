package luascripts

import (
	"context"
	"strings"
	"time"
)

// Send sends calls on c (Client.Eval) and sends again, until each has run
// or its time is up, the calls the server proved it did not run:
//
//   - NOSCRIPT (after a restart, a SCRIPT FLUSH or a failover): at once,
//     with the script's source (EVAL), so that a script's body crosses the
//     network once per server, not once per call.
//   - TRYAGAIN, MOVED or ASK that the client returned: while Redis Cluster
//     moves a slot, its keys move one at a time; a script on several keys
//     of the slot is refused with TRYAGAIN while they sit on two nodes,
//     and a node that has just lost or gained the slot answers MOVED or
//     ASK, which a client follows only a few times within microseconds. A
//     migration outlasts that. Such a call is sent again after a pause
//     that doubles from 1 ms to 32 ms, until it runs, ctx ends, or
//     migrationWait passes for a ctx without a deadline. An ASK ends a
//     call of a NoAsk script instead.
//
// Each call's Err is then wrapped with ErrRedisTooOld when a server older
// than 7.0 refused it.
func Send(ctx context.Context, c Client, calls []Call) {
	round, idx := calls, []int(nil) // idx: where round's calls are in calls, after the first round
	var wait *pauses
	for {
		c.Eval(ctx, round)
		evalSource(ctx, c, round)
		var again []int
		for i := range round {
			if migrating(&round[i]) {
				again = append(again, i)
			}
		}
		if idx != nil {
			for i := range round {
				calls[idx[i]] = round[i]
			}
		}
		if len(again) == 0 {
			break
		}
		if wait == nil {
			wait = newPauses(ctx)
		}
		if !wait.next() {
			break
		}
		if idx != nil {
			for j, i := range again {
				again[j] = idx[i]
			}
		}
		round, idx = make([]Call, len(again)), again
		for j, i := range again {
			round[j] = Call{Script: calls[i].Script, Keys: calls[i].Keys, Args: calls[i].Args}
		}
	}
	for i := range calls {
		calls[i].Err = calls[i].Script.checkVersion(calls[i].Err)
	}
}

// SendOnce sends calls as Send does, NOSCRIPT's fallback to EVAL
// included, but once: a call a migrating slot refused ends with that
// refusal (Migrating reports it) instead of being sent again until the
// migration lets it run. It is for a caller that has another way to send
// such a call: ratelimit sends a batch of decisions as one script call per
// server, and, when the server refuses that call, the decisions one by
// one with Send.
func SendOnce(ctx context.Context, c Client, calls []Call) {
	c.Eval(ctx, calls)
	evalSource(ctx, c, calls)
	for i := range calls {
		calls[i].Err = calls[i].Script.checkVersion(calls[i].Err)
	}
}

// evalSource sends again, with their source, the calls of round the server
// answered NOSCRIPT.
func evalSource(ctx context.Context, c Client, round []Call) {
	var idx []int
	for i := range round {
		if isNoScript(round[i].Err) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return
	}
	again := make([]Call, len(idx))
	for j, i := range idx {
		again[j] = Call{Script: round[i].Script, Source: true, Keys: round[i].Keys, Args: round[i].Args}
	}
	c.Eval(ctx, again)
	for j, i := range idx {
		round[i] = again[j]
	}
}

// RunWait's resends, as Send's: with the source after NOSCRIPT, again
// after a migration's refusal.
func (s *Script) sendWait(ctx context.Context, c Client, call *Call, replicas int, timeout time.Duration) (acked int, err error) {
	var wait *pauses
	for {
		call.Source, call.Reply, call.Err = false, nil, nil
		acked, err = c.EvalWait(ctx, call, replicas, timeout)
		if isNoScript(call.Err) {
			call.Source, call.Reply, call.Err = true, nil, nil
			acked, err = c.EvalWait(ctx, call, replicas, timeout)
		}
		if !migrating(call) {
			return acked, err
		}
		if wait == nil {
			wait = newPauses(ctx)
		}
		if !wait.next() {
			return acked, err
		}
	}
}

// isNoScript reports whether err is the server's NOSCRIPT reply, the only
// error after which sending the full source is known to be safe: the
// script did not run at all.
func isNoScript(err error) bool {
	msg, ok := ReplyMessage(err)
	return ok && strings.HasPrefix(msg, "NOSCRIPT")
}

// migrating reports whether c's Err is a Cluster's refusal during a slot's
// migration (the script did not run) that Send sends again: TRYAGAIN,
// MOVED, or ASK unless c's script is NoAsk.
func migrating(c *Call) bool {
	msg, ok := ReplyMessage(c.Err)
	if !ok {
		return false
	}
	return strings.HasPrefix(msg, "TRYAGAIN") || strings.HasPrefix(msg, "MOVED ") ||
		strings.HasPrefix(msg, "ASK ") && !c.Script.noAsk
}

// Migrating reports whether err is a Cluster's refusal of a script call
// while its slot migrates (TRYAGAIN, MOVED, ASK): the script did not run.
func Migrating(err error) bool {
	msg, ok := ReplyMessage(err)
	return ok && (strings.HasPrefix(msg, "TRYAGAIN") || strings.HasPrefix(msg, "MOVED ") || strings.HasPrefix(msg, "ASK "))
}

// migrationWait bounds the resends of a call whose context has no
// deadline.
const migrationWait = 2 * time.Second

// pauses are the waits between the sends of a call refused by a migrating
// slot.
type pauses struct {
	ctx   context.Context
	end   time.Time
	pause time.Duration
}

func newPauses(ctx context.Context) *pauses {
	end, ok := ctx.Deadline()
	if !ok {
		end = time.Now().Add(migrationWait)
	}
	return &pauses{ctx: ctx, end: end, pause: time.Millisecond}
}

// next waits for the next send, and reports false instead when the call's
// time is up.
func (p *pauses) next() bool {
	if time.Until(p.end) < p.pause {
		return false
	}
	t := time.NewTimer(p.pause)
	defer t.Stop()
	select {
	case <-p.ctx.Done():
		return false
	case <-t.C:
	}
	p.pause = min(2*p.pause, 32*time.Millisecond)
	return true
}
