package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts/keep"
)

// Extend moves the reservation's expiry d later, for work that outlives
// the ttl it was reserved with: until then the server keeps it charged
// and Commit settles it. It moves Expires too. d must be from a
// millisecond to MaxReservationTTL (ErrInvalidTTL).
//
// A reservation past its expiry has been given back and stays so: Extend
// returns ErrExpired, and Commit will too; one settled already,
// ErrSettled. Extend is idempotent like Commit: retried after an error it
// moves the expiry once, and a Commit after an Extend whose reply was
// lost sends that Extend again first, so it finds the reservation where
// the server has it.
func (r *Reservation) Extend(ctx context.Context, d time.Duration) error {
	_, err := r.do(ctx, call{m: modeExtend, ttl: d})
	if err == nil {
		r.mu.Lock()
		r.Expires = time.UnixMicro(r.exp)
		r.mu.Unlock()
	}
	return err
}

// extension returns the expiry an extension by d names the reservation
// by, and the one it moves it to: those of an extension whose reply was
// lost, sent again, or else d past the expiry, which it records as the
// extension in flight until the reply says where the reservation is
// (doLocked). The caller holds r.mu.
func (r *Reservation) extension(d time.Duration) (from, to int64) {
	if r.to == 0 {
		r.to = r.exp + d.Microseconds()
	}
	return r.exp, r.to
}

// A Keeper extends a reservation in the background (Keep), so that work
// of unknown length is charged when it ends, not released at a ttl
// guessed before it began.
type Keeper struct {
	k *keep.Keeper
}

// Keep extends the reservation every interval, each time so that it
// expires no sooner than its ttl (Reserve's) from then, until Stop, until
// ctx ends, or until the reservation is lost: found settled or expired, or
// not extended by its local deadline (every extension failing). Then the
// Keeper's Context ends, with a cause matching ErrSettled or ErrExpired.
// Stop the Keeper before Commit or Cancel: a Keeper still running finds
// the reservation settled and ends so.
//
// interval must be at least a millisecond (a server keeps expiries in whole
// milliseconds) and shorter than the ttl (ErrInvalidTTL); a
// reservation not admitted, settled or zero is ErrSettled. Each extension
// is one round trip (extend.lua).
func (r *Reservation) Keep(ctx context.Context, interval time.Duration) (*Keeper, error) {
	if r == nil || r.l == nil {
		return nil, fmt.Errorf("%w: keep of a nil or zero Reservation", ErrSettled)
	}
	r.mu.Lock()
	closed, deadline := r.closed, r.deadline()
	r.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("%w: keep of reservation %q on %q", ErrSettled, r.ID, r.key)
	}
	if interval < keep.MinEvery || interval >= r.ttl {
		return nil, fmt.Errorf("%w: keep every %v, must be at least %v and shorter than the ttl %v", ErrInvalidTTL, interval, keep.MinEvery, r.ttl)
	}
	return &Keeper{k: keep.Start(ctx, keep.Config{
		Every:    interval,
		Deadline: deadline,
		Renew:    r.renew,
		Gone:     func(err error) bool { return errors.Is(err, ErrExpired) || errors.Is(err, ErrSettled) },
		Lost: func(_ context.Context, gone, last error) error {
			if gone != nil {
				return gone
			}
			return fmt.Errorf("%w: reservation %q on %q: no extension by its deadline (last: %v)", ErrExpired, r.ID, r.key, last)
		},
	})}, nil
}

// renew is a Keeper's extension: the expiry moved to ttl from now, by the
// local deadline (conservative, as deadline is).
func (r *Reservation) renew(ctx context.Context) (time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := time.Until(r.deadline()) // what is left
	by := max((r.ttl - d).Round(time.Millisecond), time.Millisecond)
	_, err := r.doLocked(ctx, call{m: modeExtend, ttl: by})
	return r.deadline(), err
}

// Context returns a context derived from Keep's, cancelled when the
// reservation is lost (see context.Cause: it matches ErrExpired or
// ErrSettled), and when Stop is called or the parent ends. A zero
// Keeper's is cancelled, with a cause matching ErrSettled.
func (k *Keeper) Context() context.Context {
	if k == nil || k.k == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(fmt.Errorf("%w: a Keeper not made by Keep", ErrSettled))
		return ctx
	}
	return k.k.Context()
}

// Stop ends the extensions, waits for the one in flight, and returns why
// the reservation was lost, if it was, or nil. It neither commits nor
// cancels the reservation. It is safe to call more than once. A zero
// Keeper's is ErrSettled.
func (k *Keeper) Stop() error {
	if k == nil || k.k == nil {
		return fmt.Errorf("%w: a Keeper not made by Keep", ErrSettled)
	}
	return k.k.Stop()
}
