package semaphore

import (
	"context"
	"log/slog"
	"time"
)

// Op names what an Issuer did, in an Event.
type Op string

// The operations an Event reports.
const (
	// OpAcquire is one attempt to take a permit: Acquire, each attempt of
	// AcquireWait, and WithPermit's.
	OpAcquire Op = "acquire"
	// OpWait is a whole AcquireWait call, reported when it returns.
	OpWait Op = "wait"
	// OpExtend is Extend, and each renewal of WithPermit.
	OpExtend Op = "extend"
	// OpLost is WithPermit giving up a permit it held: the moment fn's
	// context is cancelled with ErrPermitLost.
	OpLost Op = "lost"
	// OpRelease is Release, and WithPermit's release.
	OpRelease Op = "release"
)

// Outcome is how an operation ended, in an Event.
type Outcome string

// The outcomes an Event reports, by Op:
//
//   - OpAcquire: OutcomeAcquired, OutcomeFull or OutcomeError.
//   - OpWait: OutcomeAcquired or OutcomeError.
//   - OpExtend: OutcomeOK, OutcomeNotHeld or OutcomeError.
//   - OpLost: OutcomeNotHeld (a renewal found the permit gone) or
//     OutcomeDeadline (no renewal succeeded before the local deadline).
//   - OpRelease: OutcomeReleased, OutcomeNotHeld (the permit had expired
//     or was released before) or OutcomeError.
const (
	OutcomeAcquired Outcome = "acquired"
	OutcomeFull     Outcome = "full"
	OutcomeOK       Outcome = "ok"
	OutcomeNotHeld  Outcome = "not_held"
	OutcomeDeadline Outcome = "deadline"
	OutcomeReleased Outcome = "released"
	OutcomeError    Outcome = "error"
)

// Event is one decision of an Issuer, given to the hook set with WithHook.
// Bad input, returned before any round trip, is not reported.
type Event struct {
	Op      Op
	Outcome Outcome
	// Name is the semaphore's name; Capacity the capacity the call gave.
	Name     string
	Capacity int
	// PermitID and Token identify the permit; empty and 0 for a refused or
	// failed acquire.
	PermitID string
	Token    int64
	// Holders is, for OutcomeFull, how many permits were live.
	Holders int
	// ServerTime is the server's clock when the script ran (acquire,
	// release, extend), so that a trace can order decisions as the server
	// did; zero when no reply came.
	ServerTime time.Time
	// Latency is how long the call took; for OpWait the whole wait.
	Latency time.Duration
	// HeldFor is, for OpRelease and OpLost, how long the permit had been
	// held since the server granted it, on this process's clock.
	HeldFor time.Duration
	// Err is the call's error for OutcomeError, the *FullError for
	// OutcomeFull, and the cause (matching ErrPermitLost) for OpLost.
	Err error
}

// observe reports e to the hook, and to the logger when it is a loss.
func (s *Issuer) observe(ctx context.Context, e Event) {
	if s.cfg.hook != nil {
		s.cfg.hook(ctx, e)
	}
	if s.cfg.logger == nil {
		return
	}
	var msg string
	switch {
	case e.Op == OpLost:
		msg = "semaphore: permit lost while held"
	case e.Op == OpRelease && e.Outcome == OutcomeNotHeld:
		msg = "semaphore: permit was gone before its release"
	default:
		return
	}
	attrs := []slog.Attr{slog.String("name", e.Name), slog.Int64("token", e.Token), slog.Duration("held_for", e.HeldFor)}
	if e.Err != nil {
		attrs = append(attrs, slog.String("cause", e.Err.Error()))
	}
	s.cfg.logger.LogAttrs(ctx, slog.LevelWarn, msg, attrs...)
}
