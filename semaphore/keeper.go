package semaphore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Keeper renews a permit in the background and says, through its Context,
// the moment the permit can no longer be proven. WithPermit uses one; use
// it directly when the permit must outlive one function call (a request
// whose handler runs elsewhere, a worker's whole job).
//
// The permit is trusted until its local deadline (Permit.Deadline with the
// safety margin), which each successful renewal moves on. A renewal that
// finds the permit gone ends it at once; one that fails otherwise (a
// timeout, a refused connection) is retried until that deadline.
type Keeper struct {
	ctx    context.Context // cancelled with the loss's cause
	cancel context.CancelCauseFunc
	quit   chan struct{} // closed by Stop
	exited chan struct{} // closed when the loop has returned
	once   sync.Once
	lost   error // written by the loop before exited closes
}

// Keep starts renewing p every interval, each time for p's TTL, until Stop,
// until ctx ends or until the permit is lost. p itself is not modified.
// Keep does not release the permit when it ends; call Release.
//
// interval must be positive and shorter than the TTL minus the safety
// margin, or Keep returns ErrInvalidTTL. A permit with less than one
// interval left (an acquire the client resent while the server recovered) is
// renewed at once.
func (s *Issuer) Keep(ctx context.Context, p *Permit, interval time.Duration) (*Keeper, error) {
	if err := checkPermit(p); err != nil {
		return nil, err
	}
	margin := s.cfg.marginFor(p.TTL)
	if err := checkEvery(p.TTL, interval, margin); err != nil {
		return nil, err
	}
	return s.keep(ctx, p, interval, margin), nil
}

func checkEvery(ttl, every, margin time.Duration) error {
	if every <= 0 || every >= ttl-margin {
		return fmt.Errorf("%w: %v leaves no time to renew every %v with a safety margin of %v", ErrInvalidTTL, ttl, every, margin)
	}
	return nil
}

func (s *Issuer) keep(ctx context.Context, p *Permit, every, margin time.Duration) *Keeper {
	k := &Keeper{quit: make(chan struct{}), exited: make(chan struct{})}
	k.ctx, k.cancel = context.WithCancelCause(ctx)
	go k.loop(s, *p, every, margin)
	return k
}

// Context returns a context derived from the one given to Keep, cancelled
// when the permit is lost with a cause matching ErrPermitLost (see
// context.Cause), and also when Stop is called or the parent ends.
func (k *Keeper) Context() context.Context { return k.ctx }

// Stop ends the renewals, waits for the renewal goroutine to exit and
// returns why the permit was lost, if it was (an error matching
// ErrPermitLost and either ErrNotHeld or ErrDeadline), or nil. It does not
// release the permit. It is safe to call more than once.
func (k *Keeper) Stop() error {
	if k.exited == nil {
		return fmt.Errorf("%w: a Keeper not made by Keep", ErrInvalidPermit)
	}
	k.once.Do(func() { close(k.quit) })
	<-k.exited
	k.cancel(context.Canceled)
	return k.lost
}

type extended struct {
	sent time.Time
	err  error
}

func (k *Keeper) loop(s *Issuer, p Permit, every, margin time.Duration) {
	defer close(k.exited)
	// An acquire that came back late (the client resent it while the server
	// recovered) may have less than one interval left: renew it at once.
	first := every
	if time.Until(p.Deadline(margin)) < every {
		first = 0
	}
	tick := time.NewTimer(first)
	defer tick.Stop()
	deadline := time.NewTimer(time.Until(p.Deadline(margin)))
	defer deadline.Stop()

	// Each renewal runs in a goroutine of its own, so that the deadline
	// fires on time however long a call blocks; calls end on stop, and the
	// loop waits for the one in flight before it returns.
	calls, endCalls := context.WithCancel(context.WithoutCancel(k.ctx))
	done := make(chan extended, 1)
	pending := false
	defer func() {
		endCalls()
		if pending {
			<-done
		}
	}()
	var last error
	for {
		select {
		case <-k.quit:
			return
		case <-k.ctx.Done():
			return
		case <-deadline.C:
			cause := fmt.Errorf("%w: %w", ErrPermitLost, ErrDeadline)
			if last != nil {
				cause = fmt.Errorf("%w: %w; last renewal: %w", ErrPermitLost, ErrDeadline, last)
			}
			k.lose(s, &p, cause)
			return
		case <-tick.C:
			pending = true
			go func(q Permit) {
				c, cancel := context.WithDeadline(calls, q.Deadline(margin))
				defer cancel()
				sent := time.Now()
				done <- extended{sent, s.extend(c, &q, q.TTL)}
			}(p)
		case x := <-done:
			pending = false
			switch {
			case x.err == nil:
				last, p.RequestedAt = nil, x.sent
				deadline.Reset(time.Until(p.Deadline(margin)))
				tick.Reset(every)
			case errors.Is(x.err, ErrNotHeld):
				k.lose(s, &p, fmt.Errorf("%w: %w", ErrPermitLost, x.err))
				return
			default: // transient as far as anyone can tell; the deadline decides
				last = x.err
				tick.Reset(max(every/4, time.Millisecond))
			}
		}
	}
}

func (k *Keeper) lose(s *Issuer, p *Permit, cause error) {
	k.lost = cause
	e := Event{Op: OpLost, Outcome: OutcomeDeadline, Name: p.Name, Capacity: p.Capacity, PermitID: p.ID, Token: p.Token,
		HeldFor: time.Since(p.acquiredAt), Err: cause}
	if errors.Is(cause, ErrNotHeld) {
		e.Outcome = OutcomeNotHeld
	}
	s.observe(k.ctx, e)
	k.cancel(cause)
}
