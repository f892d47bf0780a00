package telemetry

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/redis-primitives/go/election"
)

// Attribute keys of election metrics.
const (
	AttrElectionName       = attribute.Key("election.name")
	AttrElectionTransition = attribute.Key("election.transition")      // elected, demoted, follower or leader_changed
	AttrElectionReason     = attribute.Key("election.demotion.reason") // election.Reason, in snake case
	AttrElectionOutcome    = attribute.Key("election.outcome")         // attempts and renewals: election.Outcome
	AttrElectionEpoch      = attribute.Key("election.epoch")           // spans: the term's epoch
)

// Election returns an Observer for the election called name (the same
// name as its Config.Name) that records:
//
//   - election.transitions ({transition}): by election.name and
//     election.transition: elected; demoted, with election.demotion.reason;
//     follower; leader_changed, each time this node sees a term it has not
//     seen before (another node's, within the Config's RetryInterval, or
//     its own at its election), so a node that never leads still counts
//     leadership moving between the others;
//   - election.term.duration (s): each term's length, by reason;
//   - election.leader ({leader}): 1 while this node leads, 0 otherwise.
//
// The Observer has no context, so it records no spans, and it sees no
// attempts or renewals: ElectionHook records all of this and more. To
// observe with your own callbacks as well, call the returned Observer's
// fields from yours. Use one Observer per Elector, and not with
// ElectionHook on the same Elector (each would count the transitions).
func (t *Telemetry) Election(name string) election.Observer {
	t.ready()
	o := &electionObserver{t: t, name: AttrElectionName.String(name)}
	return election.Observer{
		OnElected: o.elected, OnDemoted: o.demoted, OnFollower: o.follower, OnLeaderChange: o.leaderChanged,
	}
}

type electionObserver struct {
	t    *Telemetry
	name attribute.KeyValue

	mu    sync.Mutex
	since time.Time // when this node was elected; zero while not leading
}

func (o *electionObserver) elected(int64) {
	ctx := context.Background()
	o.mu.Lock()
	o.since = time.Now()
	o.mu.Unlock()
	o.t.electionTransitions.Add(ctx, 1, metric.WithAttributes(o.name, AttrElectionTransition.String("elected")))
	o.t.electionLeader.Add(ctx, 1, metric.WithAttributes(o.name))
}

func (o *electionObserver) demoted(_ int64, r election.Reason, held time.Duration) {
	ctx := context.Background()
	reason := AttrElectionReason.String(strings.ReplaceAll(r.String(), " ", "_"))
	o.mu.Lock()
	leading := !o.since.IsZero()
	o.since = time.Time{}
	o.mu.Unlock()
	o.t.electionTransitions.Add(ctx, 1, metric.WithAttributes(o.name, AttrElectionTransition.String("demoted"), reason))
	if leading {
		o.t.electionTerm.Record(ctx, held.Seconds(), metric.WithAttributes(o.name, reason))
		o.t.electionLeader.Add(ctx, -1, metric.WithAttributes(o.name))
	}
}

func (o *electionObserver) follower(election.LeaderInfo) {
	o.t.electionTransitions.Add(context.Background(), 1, metric.WithAttributes(o.name, AttrElectionTransition.String("follower")))
}

func (o *electionObserver) leaderChanged(election.LeaderInfo) {
	o.t.electionTransitions.Add(context.Background(), 1, metric.WithAttributes(o.name, AttrElectionTransition.String("leader_changed")))
}

// ElectionHook returns a Config.Hook for the election called name that
// records what Election's Observer records (election.transitions,
// election.term.duration, election.leader), and:
//
//   - election.attempts ({attempt}) by election.outcome: elected, held
//     (another node leads) or error (Redis unreachable, this node
//     refused), and election.attempt.duration (s);
//   - election.renewals ({renewal}) by election.outcome: ok, lost or
//     error, and election.renewal.duration (s): a renewal's latency is
//     what eats into the TTL;
//   - election.epoch: the epoch of the latest term this node saw (its own
//     or another node's);
//   - spans "election.attempt" and "election.renew", each as long as its
//     round trip, under the context of the call, with the epoch (and the
//     error).
//
// Use one per Elector, instead of Election's Observer.
func (t *Telemetry) ElectionHook(name string) func(context.Context, election.Event) {
	t.ready()
	o := &electionObserver{t: t, name: AttrElectionName.String(name)}
	return func(ctx context.Context, e election.Event) {
		switch e.Op {
		case election.OpElected:
			o.elected(e.Epoch)
			t.electionEpoch.Record(ctx, e.Epoch, metric.WithAttributes(o.name))
		case election.OpDemoted:
			o.demoted(e.Epoch, e.Reason, e.Held)
		case election.OpFollower:
			o.follower(e.Leader)
		case election.OpLeaderChange:
			o.leaderChanged(e.Leader)
			t.electionEpoch.Record(ctx, e.Epoch, metric.WithAttributes(o.name))
		case election.OpAttempt, election.OpRenew:
			count, dur, span := t.electionAttempts, t.electionAttemptDuration, "election.attempt"
			if e.Op == election.OpRenew {
				count, dur, span = t.electionRenewals, t.electionRenewalDuration, "election.renew"
			}
			kvs := metric.WithAttributes(o.name, AttrElectionOutcome.String(string(e.Outcome)))
			count.Add(ctx, 1, kvs)
			dur.Record(ctx, e.Latency.Seconds(), kvs)
			var err error
			if e.Outcome == election.OutcomeError {
				err = e.Err
			}
			t.span(ctx, span, e.Latency, err, []attribute.KeyValue{o.name,
				AttrElectionOutcome.String(string(e.Outcome)), AttrElectionEpoch.Int64(e.Epoch)})
		}
	}
}
