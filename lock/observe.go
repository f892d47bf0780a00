package lock

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Op names what a Locker did, in an Event.
type Op string

// The operations an Event reports.
const (
	// OpAcquire is one attempt to take a lock: Acquire, each attempt of
	// AcquireWait, and WithLock's.
	OpAcquire Op = "acquire"
	// OpWait is a whole AcquireWait call, reported when it returns.
	OpWait Op = "wait"
	// OpExtend is Extend, and each renewal of a Keeper or WithLock.
	OpExtend Op = "extend"
	// OpLost is a Keeper (or WithLock) giving up a lease it held: the
	// moment its context is cancelled with ErrLeaseLost.
	OpLost Op = "lost"
	// OpRelease is Release, and WithLock's release.
	OpRelease Op = "release"
	// OpForceRelease is ForceRelease.
	OpForceRelease Op = "force_release"
)

// Outcome is how an operation ended, in an Event.
type Outcome string

// The outcomes an Event reports, by Op:
//
//   - OpAcquire, OpWait: OutcomeAcquired, OutcomeHeld (OpAcquire only) or
//     OutcomeError.
//   - OpExtend: OutcomeOK, OutcomeNotHeld or OutcomeError.
//   - OpLost: OutcomeNotHeld (a renewal found the lock gone) or
//     OutcomeDeadline (no renewal succeeded before the local deadline).
//   - OpRelease: OutcomeReleased, OutcomeNotHeld (the lease had been lost
//     before the release) or OutcomeError.
//   - OpForceRelease: OutcomeReleased, OutcomeNotHeld (there was no lock)
//     or OutcomeError.
const (
	OutcomeAcquired Outcome = "acquired"
	OutcomeHeld     Outcome = "held"
	OutcomeOK       Outcome = "ok"
	OutcomeNotHeld  Outcome = "not_held"
	OutcomeDeadline Outcome = "deadline"
	OutcomeReleased Outcome = "released"
	OutcomeError    Outcome = "error"
)

// Event is one decision of a Locker, given to the hook set with WithHook.
// Bad input (an empty name, a TTL under a millisecond, a nil lease) is
// returned before any decision and is not reported.
type Event struct {
	Op      Op
	Outcome Outcome
	// Name is the lock's name.
	Name string
	// Token is the lease's fencing token; 0 for a refused or failed
	// acquire, and for ForceRelease.
	Token int64
	// Latency is how long the call took: one round trip, or for OpWait the
	// whole wait, refusals and sleeps included. It is 0 for OpLost.
	Latency time.Duration
	// HeldFor is, for OpRelease and OpLost, how long the lease had been
	// held: from the time its acquire was sent to the release or loss.
	HeldFor time.Duration
	// Holder is, for OutcomeHeld, who holds the lock (token, owner and
	// remaining TTL, as in HeldError).
	Holder Holder
	// Err is the error the call returned, for OutcomeError; the cause
	// (matching ErrLeaseLost) for OpLost.
	Err error
}

// observer is what WithHook and WithLogger set; the zero value observes
// nothing and costs a nil check per call.
type observer struct {
	hook   func(context.Context, Event)
	logger *slog.Logger
}

// WithHook calls hook with every decision of the Locker, in the goroutine
// that made it, after the call and before it returns (for a Keeper's
// renewals and losses, in its renewal goroutine). Keep it fast: it adds to
// every call's latency. A metrics or tracing adapter plugs in here. hook
// must not be nil.
func WithHook(hook func(ctx context.Context, e Event)) Option {
	return func(c *config) error {
		if hook == nil {
			return invalid("nil hook")
		}
		c.hook = hook
		return nil
	}
}

// WithLogger logs, at level Warn, each lease lost while held (OpLost) and
// each release that found its lease already lost: the events after which
// the holder's work was no longer protected by the lock. Nothing else is
// logged, and nothing at all without this option. logger must not be nil.
func WithLogger(logger *slog.Logger) Option {
	return func(c *config) error {
		if logger == nil {
			return invalid("nil logger")
		}
		c.logger = logger
		return nil
	}
}

// on reports whether anyone observes: the callers skip reading the clock
// and building an Event when not.
func (o *observer) on() bool { return o.hook != nil || o.logger != nil }

// observe reports e to the hook and the logger, if set.
func (o *observer) observe(ctx context.Context, e Event) {
	if o.hook != nil {
		o.hook(ctx, e)
	}
	if o.logger == nil {
		return
	}
	switch {
	case e.Op == OpLost:
		o.logger.LogAttrs(ctx, slog.LevelWarn, "lock: lease lost",
			slog.String("name", e.Name), slog.Int64("token", e.Token),
			slog.Duration("held_for", e.HeldFor), slog.String("cause", errString(e.Err)))
	case e.Op == OpRelease && e.Outcome == OutcomeNotHeld:
		o.logger.LogAttrs(ctx, slog.LevelWarn, "lock: lease was lost before release",
			slog.String("name", e.Name), slog.Int64("token", e.Token),
			slog.Duration("held_for", e.HeldFor))
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// acquireEvent reports an acquire attempt sent at start.
func (l *Locker) acquireEvent(ctx context.Context, name string, start time.Time, lease *Lease, err error) {
	e := Event{Op: OpAcquire, Outcome: OutcomeAcquired, Name: name, Latency: time.Since(start)}
	var held *HeldError
	switch {
	case err == nil:
		e.Token = lease.Token
	case errors.As(err, &held):
		e.Outcome = OutcomeHeld
		e.Holder = Holder{Held: true, Token: held.Token, Owner: held.Owner, TTL: held.TTL}
	default:
		e.Outcome, e.Err = OutcomeError, err
	}
	l.cfg.observe(ctx, e)
}

// extendEvent reports an extend or renewal that began at start.
func (l *Locker) extendEvent(ctx context.Context, lease *Lease, start time.Time, err error) {
	e := Event{Op: OpExtend, Outcome: OutcomeOK, Name: lease.Name, Token: lease.Token, Latency: time.Since(start)}
	switch {
	case errors.Is(err, ErrNotHeld):
		e.Outcome, e.Err = OutcomeNotHeld, err
	case err != nil:
		e.Outcome, e.Err = OutcomeError, err
	}
	l.cfg.observe(ctx, e)
}

// releaseEvent reports a release that began at start.
func (l *Locker) releaseEvent(ctx context.Context, lease *Lease, start time.Time, released bool, err error) {
	now := time.Now()
	e := Event{Op: OpRelease, Outcome: OutcomeReleased, Name: lease.Name, Token: lease.Token,
		Latency: now.Sub(start), HeldFor: now.Sub(lease.acquiredAt)}
	switch {
	case err != nil:
		e.Outcome, e.Err = OutcomeError, err
	case !released:
		e.Outcome = OutcomeNotHeld
	}
	l.cfg.observe(ctx, e)
}

// waitEvent reports an AcquireWait call that began at start.
func (l *Locker) waitEvent(ctx context.Context, name string, start time.Time, lease *Lease, err error) {
	e := Event{Op: OpWait, Outcome: OutcomeAcquired, Name: name, Latency: time.Since(start)}
	if err != nil {
		e.Outcome, e.Err = OutcomeError, err
	} else {
		e.Token = lease.Token
	}
	l.cfg.observe(ctx, e)
}

// lostEvent reports a lease a Keeper gave up, with cause, which matches
// ErrLeaseLost.
func (l *Locker) lostEvent(ctx context.Context, lease *Lease, cause error) {
	if !l.cfg.on() {
		return
	}
	e := Event{Op: OpLost, Outcome: OutcomeDeadline, Name: lease.Name, Token: lease.Token,
		HeldFor: time.Since(lease.acquiredAt), Err: cause}
	if errors.Is(cause, ErrNotHeld) {
		e.Outcome = OutcomeNotHeld
	}
	l.cfg.observe(ctx, e)
}
