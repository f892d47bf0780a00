package lock

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

// The operations and outcomes an Event reports that are lock's alone; the
// others are the lease core's words. They are listed once, in Event's doc.
const (
	opForceRelease = "force_release"
	outcomeHeld    = "held"
)

// Event is one decision of a Locker, given to the hook set with WithHook.
// Bad input (an empty name, a TTL under a millisecond, a nil lease) is
// returned before any decision and is not reported.
type Event struct {
	// Op is what the Locker did:
	//
	//   - "acquire": one attempt to take a lock: Acquire, each attempt of
	//     AcquireWait, and WithLock's;
	//   - "wait": a whole AcquireWait call, reported when it returns;
	//   - "extend": Extend, and each renewal of a Keeper or WithLock;
	//   - "lost": a Keeper (or WithLock) giving up a lease it held, the
	//     moment its context is cancelled with ErrLeaseLost;
	//   - "release": Release, and WithLock's release;
	//   - "force_release": ForceRelease.
	Op string
	// Outcome is how it ended, by Op:
	//
	//   - "acquire", "wait": "acquired", "held" ("acquire" only: another
	//     holder has the lock) or "error";
	//   - "extend": "ok", "not_held" or "error";
	//   - "lost": "not_held" (a renewal found the lock gone) or "deadline"
	//     (no renewal succeeded before the local deadline);
	//   - "release": "released", "not_held" (the lease had been lost
	//     before the release) or "error";
	//   - "force_release": "released", "not_held" (there was no lock) or
	//     "error".
	Outcome string
	// Name is the lock's name.
	Name string
	// Token is the lease's fencing token; 0 for a refused or failed
	// acquire, and for ForceRelease.
	Token int64
	// Latency is how long the call took: one round trip, or for "wait" the
	// whole wait, refusals and sleeps included. It is 0 for "lost".
	Latency time.Duration
	// HeldFor is, for "release" and "lost", how long the lease had been
	// held: from the time its acquire was sent to the release or loss.
	HeldFor time.Duration
	// Holder is, for "held", who holds the lock (token, owner and
	// remaining TTL, as in HeldError).
	Holder Holder
	// Err is the error the call returned, for "error"; the cause
	// (matching ErrLeaseLost) for "lost".
	Err error
}

// WithHook calls hook with every decision of the Locker, in the goroutine
// that made it, after the call and before it returns (for a Keeper's
// renewals and losses, in its renewal goroutine). Keep it fast: it adds to
// every call's latency. A metrics or tracing adapter plugs in here. hook
// must not be nil.
func WithHook(hook func(ctx context.Context, e Event)) Option {
	return func(c *config) error { return c.SetHook(hook) }
}

// WithLogger logs, at level Warn, each lease lost while held ("lost") and
// each release that found its lease already lost: the events after which
// the holder's work was no longer protected by the lock. Nothing else is
// logged, and nothing at all without this option. logger must not be nil.
func WithLogger(logger *slog.Logger) Option {
	return func(c *config) error { return c.SetLogger(logger) }
}

// acquireEvent reports an acquire attempt sent at start.
func (l *Locker) acquireEvent(ctx context.Context, name string, start time.Time, lease *Lease, err error) {
	e := leasecore.Event{Op: leasecore.OpAcquire, Outcome: leasecore.OutcomeAcquired, Name: name, Latency: time.Since(start), Err: err}
	var held *HeldError
	switch {
	case err == nil:
		e.Token = lease.Token
	case errors.As(err, &held):
		e.Outcome = outcomeHeld
	default:
		e.Outcome = leasecore.OutcomeError
	}
	l.cfg.Report(ctx, e, lease)
}

// Event returns lock's Event for the core's e: the holder of a refusal
// moves from Err to Holder.
func (kind) Event(e leasecore.Event) Event {
	ev := Event{Op: e.Op, Outcome: e.Outcome, Name: e.Name, Token: e.Token, Latency: e.Latency, HeldFor: e.HeldFor, Err: e.Err}
	var held *HeldError
	if e.Outcome == outcomeHeld && errors.As(e.Err, &held) {
		ev.Holder, ev.Err = Holder{Held: true, Token: held.Token, Owner: held.Owner, TTL: held.TTL}, nil
	}
	return ev
}

func (kind) Warnings() (lost, gone string) {
	return "lock: lease lost", "lock: lease was lost before release"
}
