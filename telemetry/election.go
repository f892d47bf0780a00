package telemetry

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/redis-primitives/go/election"
)

// Attribute keys of election metrics.
const (
	attrElectionName       = attribute.Key("election.name")
	attrElectionTransition = attribute.Key("election.transition")      // elected, demoted, follower or leader_changed
	attrElectionReason     = attribute.Key("election.demotion.reason") // election.Reason, in snake case
	attrElectionOutcome    = attribute.Key("election.outcome")         // attempts and renewals: election.Outcome
	attrElectionEpoch      = attribute.Key("election.epoch")           // spans: the term's epoch
)

// Election is the hook (election.Config.Hook) that records an Elector's
// Events, by election.name (the Event's Name, Config.Name):
//
//   - election.transitions ({transition}) by election.transition:
//     elected; demoted, with election.demotion.reason; follower;
//     leader_changed, each time this node sees a term it has not seen
//     before (another node's, within the Config's RetryInterval, or its own
//     at its election), so a node that never leads still counts leadership
//     moving between the others;
//   - election.term.duration (s): each term's length, by reason;
//   - election.leader ({leader}): 1 while this node leads, 0 otherwise;
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
// An Elector has one Hook: to observe with your own as well, call Election
// from it.
func (t *Telemetry) Election(ctx context.Context, e election.Event) {
	t.ready()
	name := attrElectionName.String(e.Name)
	switch e.Op {
	case "elected":
		t.electionTransitions.Add(ctx, 1, metric.WithAttributes(name, attrElectionTransition.String("elected")))
		t.electionLeader.Add(ctx, 1, metric.WithAttributes(name))
		t.electionEpoch.Record(ctx, e.Epoch, metric.WithAttributes(name))
	case "demoted":
		// "demoted" follows its term's "elected", once: the term and the
		// gauge need no state of their own.
		reason := attrElectionReason.String(strings.ReplaceAll(e.Reason.String(), " ", "_"))
		t.electionTransitions.Add(ctx, 1, metric.WithAttributes(name, attrElectionTransition.String("demoted"), reason))
		t.electionTerm.Record(ctx, e.Held.Seconds(), metric.WithAttributes(name, reason))
		t.electionLeader.Add(ctx, -1, metric.WithAttributes(name))
	case "follower":
		t.electionTransitions.Add(ctx, 1, metric.WithAttributes(name, attrElectionTransition.String("follower")))
	case "leader_change":
		t.electionTransitions.Add(ctx, 1, metric.WithAttributes(name, attrElectionTransition.String("leader_changed")))
		t.electionEpoch.Record(ctx, e.Epoch, metric.WithAttributes(name))
	case "attempt", "renew":
		count, dur, span := t.electionAttempts, t.electionAttemptDuration, "election.attempt"
		if e.Op == "renew" {
			count, dur, span = t.electionRenewals, t.electionRenewalDuration, "election.renew"
		}
		kvs := metric.WithAttributes(name, attrElectionOutcome.String(e.Outcome))
		count.Add(ctx, 1, kvs)
		dur.Record(ctx, e.Latency.Seconds(), kvs)
		var err error
		if e.Outcome == "error" {
			err = e.Err
		}
		t.span(ctx, span, e.Latency, err, []attribute.KeyValue{name,
			attrElectionOutcome.String(e.Outcome), attrElectionEpoch.Int64(e.Epoch)})
	}
}
