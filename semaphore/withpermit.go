package semaphore

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// WithPermit takes a permit of the semaphore called name (one attempt, as
// Acquire), runs fn while renewing the permit every ttl times the renew
// fraction (WithRenewFraction), and releases it when fn returns, even if
// ctx has ended by then, or if fn panics.
//
// fn receives the permit, whose Token must travel with every write fn
// makes, and a context that is cancelled the moment the permit can no
// longer be proven: context.Cause then matches ErrPermitLost. fn must stop
// when it is; nothing can stop it otherwise, which is why the token
// matters.
//
// WithPermit returns ErrFull (a *FullError) without running fn when no
// permit is free; an error matching ErrPermitLost, joined with fn's, when
// the permit was lost while fn ran or was found gone at release;
// otherwise fn's error, or the release's.
func (s *Issuer) WithPermit(ctx context.Context, name string, capacity int, ttl time.Duration, fn func(ctx context.Context, p *Permit) error) error {
	if fn == nil {
		return badOption("nil fn")
	}
	ttl, err := checkCall(name, capacity, ttl)
	if err != nil {
		return err
	}
	every, margin := time.Duration(float64(ttl)*s.cfg.renew), s.cfg.marginFor(ttl)
	if every <= 0 || every >= ttl-margin {
		return fmt.Errorf("%w: %v leaves no time to renew every %v with a safety margin of %v", ErrInvalidTTL, ttl, every, margin)
	}
	p, err := s.Acquire(ctx, name, capacity, ttl)
	if err != nil {
		return err
	}
	r := s.keep(ctx, p, every, margin)
	finished := false
	defer func() {
		if !finished { // fn panicked or called runtime.Goexit
			r.stop()
			_, _ = s.giveBack(ctx, p)
		}
	}()
	fnErr := fn(r.ctx, p)
	finished = true
	lost := r.stop()
	released, err := s.giveBack(ctx, p)
	switch {
	case lost != nil:
		return errors.Join(fnErr, lost)
	case err != nil:
		return errors.Join(fnErr, err)
	case !released:
		return errors.Join(fnErr, fmt.Errorf("%w: %q (token %d) was gone at release", ErrPermitLost, name, p.Token))
	}
	return fnErr
}

// giveBack releases p even when ctx has ended, for at most one TTL: past
// that the permit has expired by itself.
func (s *Issuer) giveBack(ctx context.Context, p *Permit) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.TTL)
	defer cancel()
	return s.Release(ctx, p)
}

// renewer extends one permit in the background until stopped or lost.
type renewer struct {
	ctx    context.Context // handed to fn; cancelled with the loss's cause
	cancel context.CancelCauseFunc
	quit   chan struct{} // closed by stop
	exited chan struct{} // closed when the loop has returned
	lost   error         // written by the loop before exited closes
}

// keep starts renewing p every interval. The permit is trusted until its
// local deadline (Permit.Deadline with margin), moved on by each renewal
// that succeeds; a renewal that finds the permit gone ends it at once, and
// one that fails otherwise is retried until that deadline.
func (s *Issuer) keep(ctx context.Context, p *Permit, every, margin time.Duration) *renewer {
	r := &renewer{quit: make(chan struct{}), exited: make(chan struct{})}
	r.ctx, r.cancel = context.WithCancelCause(ctx)
	go r.loop(s, *p, every, margin)
	return r
}

// stop ends the renewals, waits for the loop and returns why the permit
// was lost, if it was. It may be called once.
func (r *renewer) stop() error {
	close(r.quit)
	<-r.exited
	r.cancel(context.Canceled)
	return r.lost
}

type extended struct {
	sent time.Time
	err  error
}

func (r *renewer) loop(s *Issuer, p Permit, every, margin time.Duration) {
	defer close(r.exited)
	// An acquire that came back late (go-redis resent it while the server
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
	calls, endCalls := context.WithCancel(context.WithoutCancel(r.ctx))
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
		case <-r.quit:
			return
		case <-r.ctx.Done():
			return
		case <-deadline.C:
			cause := fmt.Errorf("%w: %w", ErrPermitLost, ErrDeadline)
			if last != nil {
				cause = fmt.Errorf("%w: %w; last renewal: %w", ErrPermitLost, ErrDeadline, last)
			}
			r.lose(s, &p, cause)
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
				r.lose(s, &p, fmt.Errorf("%w: %w", ErrPermitLost, x.err))
				return
			default: // transient as far as anyone can tell; the deadline decides
				last = x.err
				tick.Reset(max(every/4, time.Millisecond))
			}
		}
	}
}

func (r *renewer) lose(s *Issuer, p *Permit, cause error) {
	r.lost = cause
	e := Event{Op: OpLost, Outcome: OutcomeDeadline, Name: p.Name, Capacity: p.Capacity, PermitID: p.ID, Token: p.Token,
		HeldFor: time.Since(p.acquiredAt), Err: cause}
	if errors.Is(cause, ErrNotHeld) {
		e.Outcome = OutcomeNotHeld
	}
	s.observe(r.ctx, e)
	r.cancel(cause)
}
