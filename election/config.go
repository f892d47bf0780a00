package election

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/lock"
)

// Defaults for the zero fields of a Config. The default SafetyMargin is
// package lock's (lock.WithSafetyMargin), and is not restated here.
const (
	DefaultTTL    = 10 * time.Second
	DefaultPrefix = "election:"
	// DefaultIntervalDivisor sets the default RenewInterval and
	// RetryInterval: TTL / DefaultIntervalDivisor.
	DefaultIntervalDivisor = 3
	// MinTTL is the shortest TTL New accepts.
	MinTTL = 10 * time.Millisecond
)

// Config describes one node's part in an election. Only Name is required.
type Config struct {
	// Name names the election. Every node that contends for the same
	// leadership uses the same Name (and Prefix). It must not be empty or
	// start with '}', as package lock requires of a lock's name.
	Name string
	// NodeID identifies this node to the others (Leader, Event.Leader). The
	// default is the host name and a random suffix. It labels; it does not
	// decide: two nodes with the same NodeID still exclude each other.
	NodeID string
	// Value is published with this node's leadership while it leads, for
	// followers to read through Leader and a "leader_change" Event: typically the
	// address at which the leader serves (etcd's Campaign value). It is
	// stored with the lease, so it changes with the leader atomically.
	// Default empty.
	Value string

	// TTL is the lease's time to live. A leader that stops renewing (it
	// crashed, it froze, it lost Redis) is replaced about one TTL later; a
	// shorter TTL fails over faster and demotes a leader on shorter Redis
	// hiccups. Default DefaultTTL; at least MinTTL.
	TTL time.Duration
	// RenewInterval is how often the leader renews its lease. It must be
	// well below TTL, which here means at most TTL/2, so a leader gets at
	// least two attempts before its lease ends. Default TTL /
	// DefaultIntervalDivisor.
	RenewInterval time.Duration
	// RetryInterval bounds how long a follower goes without attempting:
	// it attempts at once when the leader releases (a notification wakes
	// it) and when the leader's lease expires (the refusal says when), and
	// otherwise at least every RetryInterval. It is also the pause after a
	// Redis error, and after this node resigns (fn returned), so another
	// node gets the next term. Default TTL / DefaultIntervalDivisor.
	RetryInterval time.Duration
	// SafetyMargin is taken off the lease's TTL on the local clock, to cover
	// drift between this clock and the server's: leadership ends at the send
	// time of the last successful renewal + TTL - SafetyMargin. Zero means
	// package lock's default (see lock.WithSafetyMargin). It must leave more
	// than RenewInterval.
	SafetyMargin time.Duration

	// Prefix is put in front of the election's keys. Default DefaultPrefix.
	// With Name N and Prefix P the lease is P{N} and the epoch counter
	// P{N}:token (package lock's layout). It must not contain braces.
	Prefix string
	// Fence is the store the term's Fencer writes through. The default is
	// fence.New(client): one high-water mark per key. Pass a Store made
	// WithScope(Name) to make a newer leader's first write fence older
	// leaders out of every key of the scope.
	Fence *fence.Store

	// Hook, when set, receives every Event: each transition (elected,
	// demoted, follower, leader_change), each attempt to take the lease
	// and each renewal, with its latency and error, each with a context
	// (the attempt's, the renewal's, or Run's), one at a time, in the
	// order they happen. It is called in the goroutine that made or saw
	// the event, before it goes on: keep it fast and never block (fn
	// starts only after the "elected" Event returns, and the next attempt
	// only after "demoted"; the lease is renewed in the background
	// meanwhile). Package telemetry's Election is one.
	Hook func(ctx context.Context, e Event)
	// Logger, when set, logs each failed attempt to take the lease (an
	// "attempt" Event with Outcome "error", unless Run's context ended
	// it) at level Warn, with the error and whether Run retries it;
	// nothing else. Nil logs nothing.
	Logger *slog.Logger
}

// withDefaults fills the zero fields and validates the result.
func (c Config) withDefaults() (Config, error) {
	if c.Name == "" {
		return c, &configError{also: lock.ErrInvalidName, detail: "empty Name"}
	}
	if c.Name[0] == '}' {
		// As lock refuses it: "P{}…" has an empty hash tag, which Redis
		// ignores, so the lease and its counter would hash apart.
		return c, &configError{also: lock.ErrInvalidName, detail: fmt.Sprintf(
			"Name %q starts with '}', which would empty the keys' hash tag", c.Name)}
	}
	if c.NodeID == "" {
		c.NodeID = defaultNodeID()
	}
	if strings.Contains(c.NodeID, ownerSep) {
		return c, invalid("NodeID %q contains a newline, which separates it from Value", c.NodeID)
	}
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if strings.ContainsAny(c.Prefix, "{}") {
		return c, invalid("Prefix %q contains a brace, which would move the keys' hash tag", c.Prefix)
	}
	if c.TTL < 0 || c.RenewInterval < 0 || c.RetryInterval < 0 || c.SafetyMargin < 0 {
		return c, invalid("negative duration (TTL %v, RenewInterval %v, RetryInterval %v, SafetyMargin %v)",
			c.TTL, c.RenewInterval, c.RetryInterval, c.SafetyMargin)
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	// Redis expires keys with millisecond precision; never claim more.
	c.TTL = c.TTL.Truncate(time.Millisecond)
	if c.TTL < MinTTL {
		return c, invalid("TTL %v (want ≥ %v)", c.TTL, MinTTL)
	}
	if c.RenewInterval == 0 {
		c.RenewInterval = c.TTL / DefaultIntervalDivisor
	}
	if c.RenewInterval > c.TTL/2 {
		return c, &configError{also: ErrRenewInterval, detail: fmt.Sprintf(
			"RenewInterval %v, TTL %v (want at most TTL/2 = %v)", c.RenewInterval, c.TTL, c.TTL/2)}
	}
	if c.RetryInterval == 0 {
		c.RetryInterval = c.TTL / DefaultIntervalDivisor
	}
	// A zero SafetyMargin is lock's default, which always leaves time: at
	// most TTL/100 + 2ms, below TTL/2 for every TTL of at least MinTTL.
	if c.SafetyMargin != 0 && c.SafetyMargin >= c.TTL-c.RenewInterval {
		return c, invalid("SafetyMargin %v leaves no time to renew every %v within a TTL of %v",
			c.SafetyMargin, c.RenewInterval, c.TTL)
	}
	return c, nil
}

func defaultNodeID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "node"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return host + "-" + hex.EncodeToString(b)
}
