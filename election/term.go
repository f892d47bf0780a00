package election

import (
	"strings"
	"time"
)

// Term is one node's leadership: its epoch and a Fencer bound to it.
//
// The epoch is the lease's fencing token: every term of an election gets a
// larger one than every term before it. Carry it on every side effect, and
// have the resource refuse writes with an older epoch; Fencer does that for
// Redis keys, and a refusal through it ends the term (ReasonFencedOut). A
// Term is a plain value, valid for as long as the term lasts and harmless
// after: writes made with an old Term are refused once a newer term has
// written.
type Term struct {
	Epoch  int64
	Fencer Fencer
}

// LeaderInfo describes who leads, as seen by Redis at one moment.
type LeaderInfo struct {
	NodeID string
	// Value is the leader's Config.Value.
	Value string
	Epoch int64
	// TTL is the leader's remaining lease at that moment. A leader that
	// keeps renewing keeps pushing it forward; one that stopped is replaced
	// when it runs out.
	TTL time.Duration
}

// ownerSep separates NodeID from Value in the lease's owner label, which
// package lock stores with the lease and reports back (Holder, HeldError).
const ownerSep = "\n"

// ownerLabel is what this node's leases carry: its NodeID, and its Value
// when there is one.
func ownerLabel(nodeID, value string) string {
	if value == "" {
		return nodeID
	}
	return nodeID + ownerSep + value
}

// leaderInfo decodes a lease's owner label.
func leaderInfo(owner string, epoch int64, ttl time.Duration) LeaderInfo {
	node, value, _ := strings.Cut(owner, ownerSep)
	return LeaderInfo{NodeID: node, Value: value, Epoch: epoch, TTL: ttl}
}
