package election

import "time"

// Observer receives this node's role transitions, the leader changes it
// sees and the attempts to take the lease that failed, and nothing else:
// not every renewal, not every refused attempt (another node leading is
// OnFollower), not a failed renewal (its consequence, if any, is a
// demotion). The package logs only what Config.Logger asks for; wire these
// to your logger or metrics. Every field is optional; a nil one costs
// nothing.
//
// The callbacks run on Run's goroutines, one at a time, in the order the
// transitions happen. They must not block: Run waits for each (the lease is
// renewed in the background meanwhile, but fn starts only after OnElected
// returns, and the next attempt only after OnDemoted).
type Observer struct {
	// OnElected is called when this node wins a term, before fn starts.
	OnElected func(epoch int64)
	// OnDemoted is called once per term, when the term ends, with why and
	// how long it lasted (from the election to the end, on this node's
	// clock). When leadership can no longer be proven it is called at once,
	// before fn has returned; with ReasonResigned, fn has already returned.
	OnDemoted func(epoch int64, reason Reason, held time.Duration)
	// OnFollower is called when an attempt finds another node leading, once
	// per stretch as a follower: at the first refusal after start-up or
	// after a term of its own, not on every retry. leader is who led at
	// that refusal.
	OnFollower func(leader LeaderInfo)
	// OnLeaderChange is called whenever this node sees a term it has not
	// seen before: another node's, found leading by an attempt or by a
	// follower's check every RetryInterval while it waits (so a change
	// between two other nodes is seen within RetryInterval), and this
	// node's own, at its election (before OnElected). Every node that runs
	// gets it, including one that never leads.
	OnLeaderChange func(leader LeaderInfo)
	// OnAttemptFailed is called with the error of every attempt to take the
	// lease that failed: Redis unreachable or too slow, this node's
	// credentials refused (WRONGPASS, NOAUTH), an ACL refusal, a server
	// too old. Run then retries after RetryInterval, or returns the error
	// when no retry can fix it (see Run); gaveUp says which. An attempt
	// cut short by the end of Run's context is not reported.
	OnAttemptFailed func(err error, gaveUp bool)
}

func (o Observer) elected(epoch int64) {
	if o.OnElected != nil {
		o.OnElected(epoch)
	}
}

func (o Observer) demoted(epoch int64, r Reason, held time.Duration) {
	if o.OnDemoted != nil {
		o.OnDemoted(epoch, r, held)
	}
}

func (o Observer) follower(l LeaderInfo) {
	if o.OnFollower != nil {
		o.OnFollower(l)
	}
}

func (o Observer) leaderChange(l LeaderInfo) {
	if o.OnLeaderChange != nil {
		o.OnLeaderChange(l)
	}
}

func (o Observer) attemptFailed(err error, gaveUp bool) {
	if o.OnAttemptFailed != nil {
		o.OnAttemptFailed(err, gaveUp)
	}
}
