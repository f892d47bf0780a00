package leasecore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts/keep"
)

// Renewal is what a Keeper renews: a lease of TTL whose acquire (or last
// renewal) was sent at Sent, renewed every Interval by Renew and trusted
// until Sent + TTL - Margin.
type Renewal struct {
	Errs     *Errors
	Sent     time.Time
	TTL      time.Duration
	Interval time.Duration
	Margin   time.Duration
	// Renew extends the lease for its TTL, counted from when it is sent;
	// an error matching Errs.NotHeld says the lease is gone. It runs in a
	// goroutine of the Keeper's, one call at a time, with ctx ending at the
	// lease's deadline.
	Renew func(ctx context.Context) error
	// Lost reports the loss of the lease, with its cause, as the Keeper
	// gives it up.
	Lost func(ctx context.Context, cause error)
}

// Keeper renews a lease in the background and says, through its Context,
// the moment the lease can no longer be proven: the lease is trusted until
// its local deadline, the time the last successful acquire or renewal was
// sent (monotonic clock) plus the TTL minus the safety margin. A renewal
// that finds the lease gone ends it at once. A renewal that fails for any
// other reason (a timeout, a refused connection) is retried until that
// deadline and no longer. The loop is keep's, the project's one renewal
// loop; what the core adds is the lease's deadline, its errors, and the
// proof of a late lease before the loop starts.
type Keeper struct {
	r Renewal
	k *keep.Keeper
}

// Keep checks r's interval and starts renewing until Stop, until ctx ends
// or until the lease is lost. A lease with less than one interval left
// before its deadline (an acquire the client sent again while the server
// came back up returns late, and its deadline counts from the first send)
// is renewed before Keep returns; if that renewal fails, Keep returns an
// error matching Errs.Lost and the caller must not act as the holder.
func Keep(ctx context.Context, r Renewal) (*Keeper, error) {
	if err := r.Errs.checkInterval(r.TTL, r.Interval, r.Margin); err != nil {
		return nil, err
	}
	k := &Keeper{r: r}
	sent := r.Sent
	if time.Until(k.deadline(sent)) < r.Interval {
		var err error
		if sent, err = k.renewNow(ctx); err != nil {
			return nil, err
		}
	}
	k.k = keep.Start(ctx, keep.Config{
		Every:    r.Interval,
		Deadline: k.deadline(sent),
		Renew: func(ctx context.Context) (time.Time, error) {
			sent := time.Now()
			return k.deadline(sent), r.Renew(ctx)
		},
		Gone: func(err error) bool { return errors.Is(err, r.Errs.NotHeld) },
		Lost: func(ctx context.Context, gone, last error) error {
			cause := k.cause(errors.Join(gone, last))
			r.Lost(ctx, cause)
			return cause
		},
	})
	return k, nil
}

// deadline returns the local deadline of the lease renewed at sent.
func (k *Keeper) deadline(sent time.Time) time.Time { return sent.Add(k.r.TTL - k.r.Margin) }

// renewNow proves a lease that arrived with less than one interval to its
// deadline before anyone acts on it, and returns when the renewal was sent.
// Without this the holder would start work on a lease that lapses before
// the first renewal, or has lapsed already.
func (k *Keeper) renewNow(ctx context.Context) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, k.r.Interval)
	defer cancel()
	sent := time.Now()
	if err := k.r.Renew(ctx); err != nil {
		err = k.cause(err)
		k.r.Lost(ctx, err)
		return time.Time{}, err
	}
	return sent, nil
}

// cause returns why the lease is lost after the renewal error err: gone
// (err matches NotHeld), or not proven before the deadline.
func (k *Keeper) cause(err error) error {
	switch {
	case errors.Is(err, k.r.Errs.NotHeld):
		return fmt.Errorf("%w: %w", k.r.Errs.Lost, err)
	case err != nil:
		return fmt.Errorf("%w: %w; last renewal: %w", k.r.Errs.Lost, k.r.Errs.Deadline, err)
	}
	return fmt.Errorf("%w: %w", k.r.Errs.Lost, k.r.Errs.Deadline)
}

// Context returns a context derived from the one given to Keep, cancelled
// when the lease is lost, with a cause that matches Errs.Lost (see
// context.Cause), and also when Stop is called or the parent ends. It is
// nil for a nil Keeper.
func (k *Keeper) Context() context.Context {
	if k == nil {
		return nil
	}
	return k.k.Context()
}

// Sent returns when the last successful acquire or renewal was sent.
func (k *Keeper) Sent() time.Time { return k.Deadline().Add(-(k.r.TTL - k.r.Margin)) }

// Deadline returns the local deadline of the lease as last renewed.
func (k *Keeper) Deadline() time.Time { return k.k.Deadline() }

// Err returns nil while the lease is held, and why it was lost after.
func (k *Keeper) Err() error { return k.k.Err() }

// Stop ends the renewals, waits for the renewal goroutine to exit and
// returns Err. It does not release the lease. It is safe to call more than
// once.
func (k *Keeper) Stop() error { return k.k.Stop() }

// NotKept is the error of a primitive's Keeper not made by Keep (its zero
// value), which keeps nothing: its Stop's, and the cause of its Context
// (see NotKeptContext).
func (e *Errors) NotKept() error {
	return fmt.Errorf("%w: a Keeper not made by Keep", e.InvalidLease)
}

// NotKeptContext is the Context of a primitive's Keeper not made by Keep:
// cancelled already, with NotKept as its cause, so that work started under
// it ends at once instead of meeting a nil context.
func (e *Errors) NotKeptContext() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(e.NotKept())
	return ctx
}
