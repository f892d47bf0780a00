package election

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis-primitives/go/lock"
)

// The operations and outcomes an Event reports, as its Op and Outcome say
// them: strings, the words a metrics or tracing adapter records, listed
// once, in Event's doc.
const (
	opAttempt      = "attempt"
	opRenew        = "renew"
	opElected      = "elected"
	opDemoted      = "demoted"
	opFollower     = "follower"
	opLeaderChange = "leader_change"

	outcomeOK      = "ok"
	outcomeElected = "elected"
	outcomeHeld    = "held"
	outcomeLost    = "lost"
	outcomeError   = "error"
)

// Event is one thing an Elector did or saw, given to Config.Hook: the one
// report of every transition and every round trip of an election. The
// shape is the one every primitive of this project reports with
// (lock.Event, fence.Event and the others'), with a context, so a tracing
// adapter can put attempts and renewals in spans.
//
// The callbacks of client-go's leaderelection map onto it: Run's fn is
// OnStartedLeading, the end of fn's context OnStoppedLeading, and an Event
// of Op "leader_change" OnNewLeader.
type Event struct {
	// Op is what the Elector did or saw:
	//
	//   - "attempt": one attempt to take the lease (Run's, and each
	//     attempt of a follower's wait);
	//   - "renew": one renewal of the lease while this node leads;
	//   - "elected": this node won a term (Epoch), before fn starts;
	//   - "demoted": this node's term ended (Reason, Held), once per term.
	//     When leadership can no longer be proven it is reported at once,
	//     before fn has returned; with ReasonResigned, fn has returned;
	//   - "follower": an attempt found another node leading (Leader), once
	//     per stretch as a follower: at the first refusal after start-up or
	//     after a term of its own, not on every retry;
	//   - "leader_change": this node saw a term it had not seen (Leader):
	//     another node's, found leading by an attempt or by a follower's
	//     check every RetryInterval while it waits (so a change between two
	//     other nodes is seen within RetryInterval), and this node's own,
	//     at its election (before "elected"). Every node that runs sees it,
	//     including one that never leads.
	Op string
	// Outcome is how it ended, by Op:
	//
	//   - "attempt": "elected" (this node took the lease), "held" (another
	//     node leads) or "error" (Redis not reached, or this node refused:
	//     Err says why, GaveUp whether Run returns it);
	//   - "renew": "ok", "lost" (the lease was gone) or "error";
	//   - "elected", "demoted", "follower", "leader_change": "ok".
	Outcome string
	// Name is the election's name (Config.Name).
	Name string
	// Epoch is the term's epoch: this node's for "renew", "elected" and
	// "demoted" and a won attempt; the leader's for "follower",
	// "leader_change" and an attempt that found the lease held.
	Epoch int64
	// Leader is, for "follower", "leader_change" and an attempt that found
	// the lease "held", who leads.
	Leader LeaderInfo
	// Reason and Held are, for "demoted", why the term ended and how long
	// it lasted, from the election to its end, on this node's clock.
	Reason Reason
	Held   time.Duration
	// Latency is, for "attempt" and "renew", the round trip's.
	Latency time.Duration
	// Err is, for "error", the error; for "lost", the cause.
	Err error
	// GaveUp is, for a failed attempt, whether Run returns its error
	// because no retry can fix it (see Run), rather than retrying after
	// RetryInterval.
	GaveUp bool
}

// report is the one place an Event leaves the Elector: to Config.Hook, if
// set, and a failed attempt to Config.Logger, one event at a time (a
// follower's wait and its leader watch, or a term's renewals and its end,
// report from two goroutines). An attempt cut short by the end of Run's
// context is the shutdown, not a failure, and is not logged.
func (e *Elector) report(ctx context.Context, ev Event) {
	ev.Name = e.cfg.Name
	if ev.Op == opAttempt && ev.Outcome == outcomeError {
		ev.GaveUp = permanent(ev.Err)
		if e.cfg.Logger != nil && ctx.Err() == nil {
			e.logFailed(ctx, ev)
		}
	}
	if e.cfg.Hook != nil {
		e.hookMu.Lock()
		defer e.hookMu.Unlock()
		e.cfg.Hook(ctx, ev)
	}
}

// logFailed logs a failed attempt at level Warn.
func (e *Elector) logFailed(ctx context.Context, ev Event) {
	attrs := []slog.Attr{slog.String("election", e.cfg.Name), slog.String("node", e.cfg.NodeID),
		slog.String("error", ev.Err.Error())}
	msg := "election: attempt to lead failed; Run returns, no retry can fix it"
	if !ev.GaveUp {
		msg = "election: attempt to lead failed; retrying"
		attrs = append(attrs, slog.Duration("retry_in", e.cfg.RetryInterval))
	}
	e.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, msg, attrs...)
}

// reportLock turns package lock's report of an attempt or a renewal into
// an Event.
func (e *Elector) reportLock(ctx context.Context, ev lock.Event) {
	if e.cfg.Hook == nil && e.cfg.Logger == nil {
		return
	}
	out := Event{Epoch: ev.Token, Latency: ev.Latency, Err: ev.Err}
	switch ev.Op {
	case "acquire":
		out.Op = opAttempt
		switch ev.Outcome {
		case "acquired":
			out.Outcome = outcomeElected
		case "held":
			out.Outcome = outcomeHeld
			out.Leader = leaderInfo(ev.Holder.Owner, ev.Holder.Token, ev.Holder.TTL)
			out.Epoch = ev.Holder.Token
		default:
			out.Outcome = outcomeError
		}
	case "extend":
		out.Op = opRenew
		switch ev.Outcome {
		case "ok":
			out.Outcome = outcomeOK
		case "not_held":
			out.Outcome = outcomeLost
		default:
			out.Outcome = outcomeError
		}
	default:
		return
	}
	e.report(ctx, out)
}
