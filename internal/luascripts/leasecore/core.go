package leasecore

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// The operations and outcomes an Event reports, the words lock's and
// semaphore's Event docs list. A refused acquire's outcome is the
// primitive's own ("held", "full").
const (
	OpAcquire = "acquire"
	OpWait    = "wait"
	OpExtend  = "extend"
	OpLost    = "lost"
	OpRelease = "release"

	OutcomeAcquired = "acquired"
	OutcomeOK       = "ok"
	OutcomeNotHeld  = "not_held"
	OutcomeDeadline = "deadline"
	OutcomeReleased = "released"
	OutcomeError    = "error"
)

// Held is what the core reads of a primitive's lease.
type Held struct {
	Name     string
	ID       string // a semaphore's permit id; "" for a lock
	Token    int64
	Capacity int // 1 for a lock
	TTL      time.Duration
	Sent     time.Time // when the acquire, or the last Extend, was sent
	Acquired time.Time // when the acquire was sent: Extend does not move it
	Granted  time.Time // the server's clock at the grant, when it said
}

// Event is one decision, as the core reports it: the primitive's Kind
// makes its own Event of it.
type Event struct {
	Op, Outcome, Name string
	ID                string // as Held's
	Token             int64
	Capacity          int
	Holders           int       // a refused acquire's live holders, when it said
	ServerTime        time.Time // the server's clock when the script ran, when it said
	Latency, HeldFor  time.Duration
	Err               error
}

// Kind is what tells a primitive's leases L apart, for the core, and its
// Event E. It is a type with no state, so that a Core's zero value (a
// primitive not made by New) still knows its errors.
type Kind[L, E any] interface {
	// Errs returns the primitive's sentinels.
	Errs() *Errors
	// Check returns an error matching Errs().InvalidLease for a lease
	// that the primitive's Acquire did not make.
	Check(l *L) error
	// Held reads l.
	Held(l *L) Held
	// Extended records on l an Extend for ttl sent at sent.
	Extended(l *L, sent time.Time, ttl time.Duration)
	// Event returns the primitive's Event for e.
	Event(e Event) E
	// Warnings returns what the logger says of a lease lost while held,
	// and of a release that found its lease gone.
	Warnings() (lost, gone string)
}

// Core is a primitive on the lease core: its options, client, observer and
// the two scripts every lease has. The operations every primitive has
// (Extend, Release, Keep, the run of a function under a lease, the wait,
// Preflight) are written here once, on a Core. A primitive's config embeds
// it: the setters serve the primitive's options, and New sets Client,
// ExtendScript and ReleaseScript.
type Core[L, E any, K Kind[L, E]] struct {
	Options
	Client luascripts.Client
	// ExtendScript sets l's TTL to ttl from now if l still holds its
	// place, and returns the server's clock when it said; an error
	// matching NotHeld when l does not, other errors mapped by Errs.Call.
	// It does not change l.
	ExtendScript func(ctx context.Context, l *L, ttl time.Duration) (time.Time, error)
	// ReleaseScript gives l's place back if l still holds it, and reports
	// whether it did (and the server's clock, when it said); errors as
	// the client returned them.
	ReleaseScript func(ctx context.Context, l *L) (bool, time.Time, error)

	hook   func(context.Context, E)
	logger *slog.Logger
}

// Ready refuses the calls of a primitive not made by New (its zero value),
// with NilClient.
func (c *Core[L, E, K]) Ready() error {
	if c == nil || c.Client == nil {
		var k K
		return k.Errs().NilClient
	}
	return nil
}

// CheckCall rejects, without a round trip, a call no script could serve
// or no holder could count on: a bad name or capacity, a primitive not
// made by New, a TTL under the floor (see CheckTTL). It returns ttl in
// whole milliseconds.
func (c *Core[L, E, K]) CheckCall(name string, capacity int, ttl time.Duration) (time.Duration, error) {
	var k K
	if err := k.Errs().CheckName(name); err != nil {
		return 0, err
	}
	if err := k.Errs().checkCapacity(capacity); err != nil {
		return 0, err
	}
	if err := c.Ready(); err != nil {
		return 0, err
	}
	return c.CheckTTL(ttl)
}

// CheckName rejects, without a round trip, a bad name, and then a
// primitive not made by New: the check of a call on a name with no lease
// (a diagnostic, an operator's release).
func (c *Core[L, E, K]) CheckName(name string) error {
	var k K
	if err := k.Errs().CheckName(name); err != nil {
		return err
	}
	return c.Ready()
}

// checkLease rejects a lease the primitive did not make, and a primitive
// not made by New.
func (c *Core[L, E, K]) checkLease(l *L) error {
	var k K
	if err := k.Check(l); err != nil {
		return err
	}
	return c.Ready()
}

// Extend is a primitive's Extend: it sets l's TTL to ttl, counted from
// now, if and only if l still holds its place, and then records on l when
// it was sent and the TTL.
func (c *Core[L, E, K]) Extend(ctx context.Context, l *L, ttl time.Duration) error {
	if err := c.checkLease(l); err != nil {
		return err
	}
	ttl, err := c.CheckTTL(ttl)
	if err != nil {
		return err
	}
	sent := time.Now()
	if err := c.extend(ctx, l, ttl); err != nil {
		return err
	}
	var k K
	k.Extended(l, sent, ttl)
	return nil
}

// extend runs the extend script for l without changing l (a Keeper's
// renewals run it from their own goroutine), and reports it.
func (c *Core[L, E, K]) extend(ctx context.Context, l *L, ttl time.Duration) error {
	var start time.Time
	if c.On() {
		start = time.Now()
	}
	at, err := c.ExtendScript(ctx, l, ttl)
	if c.On() {
		e := c.about(l, OpExtend, OutcomeOK)
		e.ServerTime, e.Latency, e.Err = at, time.Since(start), err
		switch {
		case errors.Is(err, c.Errs.NotHeld):
			e.Outcome = OutcomeNotHeld
		case err != nil:
			e.Outcome = OutcomeError
		}
		c.Report(ctx, e, l)
	}
	return err
}

// Release is a primitive's Release: it gives l's place back if l still
// holds it, and reports whether it did.
func (c *Core[L, E, K]) Release(ctx context.Context, l *L) (bool, error) {
	if err := c.checkLease(l); err != nil {
		return false, err
	}
	var start time.Time
	if c.On() {
		start = time.Now()
	}
	released, at, err := c.ReleaseScript(ctx, l)
	e := c.about(l, OpRelease, OutcomeReleased)
	if err != nil {
		released, err = false, c.Errs.Call(ctx, "release", e.Name, err)
	}
	if c.On() {
		now := time.Now()
		e.ServerTime, e.Latency, e.HeldFor, e.Err = at, now.Sub(start), now.Sub(c.held(l).Acquired), err
		switch {
		case err != nil:
			e.Outcome = OutcomeError
		case !released:
			e.Outcome = OutcomeNotHeld
		}
		c.Report(ctx, e, l)
	}
	return released, err
}

// Keep is a primitive's Keep: it renews l every interval, each time for
// l's TTL, until the Keeper is stopped, ctx ends or l is lost (see Keep).
// l itself is not changed.
func (c *Core[L, E, K]) Keep(ctx context.Context, l *L, interval time.Duration) (*Keeper, error) {
	if err := c.checkLease(l); err != nil {
		return nil, err
	}
	return Keep(ctx, c.renewal(*l, interval))
}

// renewal is how the core keeps l: renewed by the extend script, its loss
// reported as "lost".
func (c *Core[L, E, K]) renewal(l L, interval time.Duration) Renewal {
	h := c.held(&l)
	return Renewal{
		Errs: c.Errs, Sent: h.Sent, TTL: h.TTL, Interval: interval, Margin: c.Margin(h.TTL),
		Renew: func(ctx context.Context) error { return c.extend(ctx, &l, h.TTL) },
		Lost:  func(ctx context.Context, cause error) { c.lost(ctx, &l, cause) },
	}
}

// lost reports l, lost with cause while a Keeper held it.
func (c *Core[L, E, K]) lost(ctx context.Context, l *L, cause error) {
	if !c.On() {
		return
	}
	e := c.about(l, OpLost, OutcomeDeadline)
	e.HeldFor, e.Err = time.Since(c.held(l).Acquired), cause
	if errors.Is(cause, c.Errs.NotHeld) {
		e.Outcome = OutcomeNotHeld
	}
	c.Report(ctx, e, l)
}

// With is a primitive's WithLock: it takes a lease of name with acquire
// (one attempt, for ttl as CheckCall returns it), runs fn under it while
// renewing it every ttl times the renew fraction, and gives it back when
// fn returns (see Hold).
func (c *Core[L, E, K]) With(ctx context.Context, name string, capacity int, ttl time.Duration,
	acquire func(ttl time.Duration) (*L, error), fn func(context.Context, *L) error) error {
	if fn == nil {
		var k K
		return k.Errs().Invalid("nil fn")
	}
	ttl, err := c.CheckCall(name, capacity, ttl)
	if err != nil {
		return err
	}
	interval, err := c.RenewInterval(ttl)
	if err != nil {
		return err
	}
	l, err := acquire(ttl)
	if err != nil {
		return err
	}
	h := c.held(l)
	return Hold(ctx, c.renewal(*l, interval), h.Name, h.Token,
		func(ctx context.Context) (bool, error) { return c.Release(ctx, l) },
		func(ctx context.Context) error { return fn(ctx, l) })
}

// AcquireWait is a primitive's AcquireWait: it checks the call, waits with
// try and refused as Wait does on name's release channel, and reports the
// whole wait.
func (c *Core[L, E, K]) AcquireWait(ctx context.Context, name string, capacity int, ttl time.Duration,
	try func(waiting bool) (*L, error), refused func(error) (expires time.Duration, ok bool)) (*L, error) {
	if _, err := c.CheckCall(name, capacity, ttl); err != nil {
		return nil, err
	}
	var start time.Time
	if c.On() {
		start = time.Now()
	}
	l, err := Wait(ctx, c.Client, &c.Options, name, c.Channel(name), try, refused)
	if c.On() {
		e := Event{Op: OpWait, Outcome: OutcomeError, Name: name, Capacity: capacity, Latency: time.Since(start), Err: err}
		if err == nil {
			h := c.held(l)
			e.Outcome, e.ID, e.Token, e.ServerTime = OutcomeAcquired, h.ID, h.Token, h.Granted
		}
		c.Report(ctx, e, l)
	}
	return l, err
}

// Preflight is a primitive's Preflight (see preflight), with the ACL check
// and the kind of tokens that check returns.
func (c *Core[L, E, K]) Preflight(ctx context.Context, check func() (acl ACLCheck, counterTokens bool)) (Report, error) {
	if err := c.Ready(); err != nil {
		return Report{}, err
	}
	acl, counterTokens := check()
	return preflight(ctx, c.Client, c.Errs, c.Prefix, acl, counterTokens)
}

// GiveBack gives back, in the background and by l's own id (the release
// script, so never another holder's place), what l's acquire may have
// taken although the caller never learnt it did (its reply never came,
// see NoReply), for at most l's TTL since the acquire was sent, each
// release taking no longer than the acquire could under ctx, the acquire's
// context (see GiveBack).
func (c *Core[L, E, K]) GiveBack(ctx context.Context, l *L) {
	h := c.held(l)
	var each time.Duration
	if d, ok := ctx.Deadline(); ok {
		each = max(d.Sub(h.Sent), time.Millisecond)
	}
	GiveBack(h.Sent, h.TTL, each, func(ctx context.Context) (bool, error) {
		released, _, err := c.ReleaseScript(ctx, l)
		return released, err
	})
}

// held reads l.
func (c *Core[L, E, K]) held(l *L) Held {
	var k K
	return k.Held(l)
}

// about returns an Event of op about l, with outcome.
func (c *Core[L, E, K]) about(l *L, op, outcome string) Event {
	h := c.held(l)
	return Event{Op: op, Outcome: outcome, Name: h.Name, ID: h.ID, Token: h.Token, Capacity: h.Capacity}
}

// SetHook sets the hook that every decision is reported to; it must not
// be nil.
func (c *Core[L, E, K]) SetHook(hook func(context.Context, E)) error {
	if hook == nil {
		return c.Errs.Invalid("nil hook")
	}
	c.hook = hook
	return nil
}

// SetLogger sets the logger that losses are reported to; it must not be
// nil.
func (c *Core[L, E, K]) SetLogger(logger *slog.Logger) error {
	if logger == nil {
		return c.Errs.Invalid("nil logger")
	}
	c.logger = logger
	return nil
}

// On reports whether anyone observes: the callers skip reading the clock
// and building an Event when not.
func (c *Core[L, E, K]) On() bool { return c.hook != nil || c.logger != nil }

// Report gives e, about l (nil for none), to the hook as the primitive's
// Event, and to the logger, at level Warn, when it is a loss: a lease
// lost while held, or a release that found its lease gone.
func (c *Core[L, E, K]) Report(ctx context.Context, e Event, l *L) {
	var k K
	if c.hook != nil {
		c.hook(ctx, k.Event(e))
	}
	if c.logger == nil {
		return
	}
	msg, gone := k.Warnings()
	switch {
	case e.Op == OpLost:
	case e.Op == OpRelease && e.Outcome == OutcomeNotHeld:
		msg = gone
	default:
		return
	}
	attrs := []slog.Attr{slog.String("name", e.Name), slog.Int64("token", e.Token), slog.Duration("held_for", e.HeldFor)}
	if e.Err != nil {
		attrs = append(attrs, slog.String("cause", e.Err.Error()))
	}
	c.logger.LogAttrs(ctx, slog.LevelWarn, msg, attrs...)
}
