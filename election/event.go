package election

import (
	"context"
	"time"

	"github.com/redis-primitives/go/lock"
)

// Op names what an Elector did or saw, in an Event.
type Op string

// The operations an Event reports.
const (
	// OpAttempt is one attempt to take the lease: Run's, each attempt of
	// a follower's wait, and Resign's successor check.
	OpAttempt Op = "attempt"
	// OpRenew is one renewal of the lease while this node leads.
	OpRenew Op = "renew"
	// OpElected: this node won a term (Epoch), before fn starts.
	OpElected Op = "elected"
	// OpDemoted: this node's term ended (Reason, Held).
	OpDemoted Op = "demoted"
	// OpFollower: an attempt found another node leading (Leader), once
	// per stretch as a follower, as Observer.OnFollower.
	OpFollower Op = "follower"
	// OpLeaderChange: this node saw a term it had not seen (Leader), as
	// Observer.OnLeaderChange.
	OpLeaderChange Op = "leader_change"
)

// Outcome is how an operation ended, in an Event.
type Outcome string

// The outcomes an Event reports, by Op:
//
//   - OpAttempt: OutcomeElected (this node took the lease), OutcomeHeld
//     (another node leads) or OutcomeError (Redis not reached, or this node
//     refused: Err says why).
//   - OpRenew: OutcomeOK, OutcomeLost (the lease was gone) or OutcomeError.
//   - OpElected, OpDemoted, OpFollower, OpLeaderChange: OutcomeOK.
const (
	OutcomeOK      Outcome = "ok"
	OutcomeElected Outcome = "elected"
	OutcomeHeld    Outcome = "held"
	OutcomeLost    Outcome = "lost"
	OutcomeError   Outcome = "error"
)

// Event is one thing an Elector did or saw, given to Config.Hook. The
// shape is the one every primitive of this project reports with
// (lock.Event, fence.Event and the others'), with a context, so a tracing
// adapter can put attempts and renewals in spans.
type Event struct {
	Op      Op
	Outcome Outcome
	// Epoch is the term's epoch: this node's for OpRenew, OpElected and
	// OpDemoted and a won attempt; the leader's for OpFollower,
	// OpLeaderChange and an attempt that found the lease held.
	Epoch int64
	// Leader is, for OpFollower, OpLeaderChange and OutcomeHeld, who leads.
	Leader LeaderInfo
	// Reason and Held are, for OpDemoted, why the term ended and how long
	// it lasted on this node's clock.
	Reason Reason
	Held   time.Duration
	// Latency is, for OpAttempt and OpRenew, the round trip's.
	Latency time.Duration
	// Err is, for OutcomeError, the error; for OutcomeLost, the cause.
	Err error
}

// report gives e to Config.Hook, if set, one event at a time: a
// follower's wait and its leader watch, or a term's renewals and its
// end, report from two goroutines.
func (e *Elector) report(ctx context.Context, ev Event) {
	if e.cfg.Hook != nil {
		e.hookMu.Lock()
		defer e.hookMu.Unlock()
		e.cfg.Hook(ctx, ev)
	}
}

// reportLock turns package lock's report of an attempt or a renewal into
// an Event.
func (e *Elector) reportLock(ctx context.Context, ev lock.Event) {
	if e.cfg.Hook == nil {
		return
	}
	out := Event{Epoch: ev.Token, Latency: ev.Latency, Err: ev.Err}
	switch ev.Op {
	case lock.OpAcquire:
		out.Op = OpAttempt
		switch ev.Outcome {
		case lock.OutcomeAcquired:
			out.Outcome = OutcomeElected
		case lock.OutcomeHeld:
			out.Outcome = OutcomeHeld
			out.Leader = leaderInfo(ev.Holder.Owner, ev.Holder.Token, ev.Holder.TTL)
			out.Epoch = ev.Holder.Token
		default:
			out.Outcome = OutcomeError
		}
	case lock.OpExtend:
		out.Op = OpRenew
		switch ev.Outcome {
		case lock.OutcomeOK:
			out.Outcome = OutcomeOK
		case lock.OutcomeNotHeld:
			out.Outcome = OutcomeLost
		default:
			out.Outcome = OutcomeError
		}
	default:
		return
	}
	e.report(ctx, out)
}
