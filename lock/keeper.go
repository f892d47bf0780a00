package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Keeper renews a lease in the background and says, through its Context,
// the moment the lease can no longer be proven. WithLock uses one; use it
// directly to hold a lease for longer than one function call (a leader's
// term, say).
//
// The rule it enforces: the lease is trusted until its local deadline, the
// time the last successful acquire or renewal was sent (monotonic clock)
// plus the TTL minus the safety margin. A renewal that finds the lock gone
// ends it at once. A renewal that fails for any other reason (a timeout, a
// refused connection) is retried until that deadline and no longer.
type Keeper struct {
	locker   *Locker
	interval time.Duration
	margin   time.Duration

	ctx    context.Context
	cancel context.CancelCauseFunc
	halt   chan struct{} // closed by Stop
	done   chan struct{} // closed when the renewal goroutine has exited
	once   sync.Once

	mu    sync.Mutex
	lease Lease // a copy, updated on each renewal
	err   error // why the lease was lost, once it was
}

// Keep starts renewing lease every interval, each time for the lease's TTL,
// until Stop, until ctx ends or until the lease is lost. lease itself is not
// modified: Keeper.Lease returns the renewed copy. Keep does not release the
// lock when it ends; call Release.
//
// interval must be positive and shorter than the TTL minus the safety
// margin, or Keep returns ErrInvalidTTL. A third of the TTL leaves two
// chances to renew before the deadline.
//
// A lease with less than one interval left before its deadline is renewed
// before Keep returns; if that renewal fails, Keep returns an error matching
// ErrLeaseLost and the caller must not act as the holder.
func (l *Locker) Keep(ctx context.Context, lease *Lease, interval time.Duration) (*Keeper, error) {
	if err := checkLease(lease); err != nil {
		return nil, err
	}
	margin := l.cfg.marginFor(lease.TTL)
	if err := checkInterval(lease.TTL, interval, margin); err != nil {
		return nil, err
	}
	k := &Keeper{
		locker: l, interval: interval, margin: margin,
		halt: make(chan struct{}), done: make(chan struct{}),
		lease: *lease,
	}
	if time.Until(lease.Deadline(margin)) < interval {
		if err := k.renewNow(ctx); err != nil {
			return nil, err
		}
	}
	k.ctx, k.cancel = context.WithCancelCause(ctx)
	go k.run()
	return k, nil
}

// renewNow proves a lease that arrived with less than one interval to its
// deadline before anyone acts on it: an acquire can return late (the
// client sent it again while the server came back up), and the deadline
// counts from when it was first sent. Without this the holder would start
// work on a lease that lapses before the first renewal, or has lapsed
// already.
func (k *Keeper) renewNow(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, k.interval)
	defer cancel()
	sent := time.Now()
	if err := k.locker.extend(ctx, &k.lease, k.lease.TTL); err != nil {
		if errors.Is(err, ErrNotHeld) {
			err = fmt.Errorf("%w: %w", ErrLeaseLost, err)
		} else {
			err = fmt.Errorf("%w: %w; renewal: %w", ErrLeaseLost, ErrDeadline, err)
		}
		k.locker.lostEvent(ctx, &k.lease, err)
		return err
	}
	k.lease.RequestedAt = sent
	return nil
}

func checkInterval(ttl, interval, margin time.Duration) error {
	if interval <= 0 || interval >= ttl-margin {
		return fmt.Errorf("%w: renew interval %v must be positive and under the ttl %v minus the safety margin %v",
			ErrInvalidTTL, interval, ttl, margin)
	}
	return nil
}

// Context returns a context derived from the one given to Keep. It is
// cancelled when the lease is lost, with a cause that matches ErrLeaseLost
// (see context.Cause), and also when Stop is called or the parent ends.
func (k *Keeper) Context() context.Context { return k.ctx }

// Lease returns the lease as last renewed: RequestedAt and TTL are those of
// the latest successful renewal.
func (k *Keeper) Lease() Lease {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lease
}

// Deadline returns the local deadline of the lease as last renewed.
func (k *Keeper) Deadline() time.Time {
	l := k.Lease()
	return l.Deadline(k.margin)
}

// Err returns nil while the lease is held, and why it was lost after. The
// error matches ErrLeaseLost, and either ErrNotHeld (a renewal found the lock
// gone) or ErrDeadline; with ErrDeadline it also wraps the last renewal's
// error if one failed (Redis unreachable), and none if no renewal came back
// at all (a frozen server, or this process paused).
func (k *Keeper) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

// Stop ends the renewals, waits for the renewal goroutine to exit and
// returns Err. It does not release the lock. It is safe to call more than
// once.
func (k *Keeper) Stop() error {
	if k.done == nil {
		return fmt.Errorf("%w: a Keeper not made by Keep", ErrInvalidLease)
	}
	k.once.Do(func() { close(k.halt) })
	<-k.done
	k.cancel(context.Canceled)
	return k.Err()
}

type renewal struct {
	sent time.Time
	err  error
}

func (k *Keeper) run() {
	defer close(k.done)
	lease := k.Lease()
	deadline := lease.Deadline(k.margin)
	expire := time.NewTimer(time.Until(deadline))
	defer expire.Stop()
	// The first renewal comes sooner when the lease arrives with less than
	// an interval left (an acquire that the client sent again while the
	// server came back up): halfway to the deadline, not after it.
	next := time.NewTimer(min(k.interval, time.Until(deadline)/2))
	defer next.Stop()

	// callCtx ends every renewal call on Stop. The renewal itself runs in a
	// goroutine of its own so that the deadline fires on time even when a
	// call blocks past it (a frozen server, a client that ignores context
	// deadlines); this loop waits for it before returning.
	callCtx, cancelCalls := context.WithCancel(context.WithoutCancel(k.ctx))
	defer cancelCalls()
	results := make(chan renewal, 1)
	inFlight := false
	defer func() {
		cancelCalls()
		if inFlight {
			<-results
		}
	}()
	var lastErr error

	for {
		select {
		case <-k.halt:
			return
		case <-k.ctx.Done():
			return
		case <-expire.C:
			reason := fmt.Errorf("%w: %w", ErrLeaseLost, ErrDeadline)
			if lastErr != nil {
				reason = fmt.Errorf("%w: %w; last renewal: %w", ErrLeaseLost, ErrDeadline, lastErr)
			}
			k.lose(reason)
			return
		case <-next.C:
			if inFlight {
				continue
			}
			inFlight = true
			go func(lease Lease, deadline time.Time) {
				ctx, cancel := context.WithDeadline(callCtx, deadline)
				defer cancel()
				sent := time.Now()
				results <- renewal{sent: sent, err: k.locker.extend(ctx, &lease, lease.TTL)}
			}(lease, deadline)
		case r := <-results:
			inFlight = false
			switch {
			case r.err == nil:
				lastErr = nil
				k.mu.Lock()
				k.lease.RequestedAt = r.sent
				lease = k.lease
				k.mu.Unlock()
				deadline = lease.Deadline(k.margin)
				expire.Reset(time.Until(deadline))
				next.Reset(k.interval)
			case errors.Is(r.err, ErrNotHeld):
				k.lose(fmt.Errorf("%w: %w", ErrLeaseLost, r.err))
				return
			default:
				// Transient, as far as anyone can tell: try again soon,
				// the deadline timer decides when to give up.
				lastErr = r.err
				next.Reset(max(k.interval/4, time.Millisecond))
			}
		}
	}
}

func (k *Keeper) lose(err error) {
	k.mu.Lock()
	k.err = err
	lease := k.lease
	k.mu.Unlock()
	k.locker.lostEvent(k.ctx, &lease, err)
	k.cancel(err)
}
