package semaphore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// AcquireWait takes a permit as Acquire does, waiting for as long as ctx
// allows while the semaphore is full. It returns as soon as it holds a
// permit, with an error matching ctx's when ctx ends first, and at once on
// any error but ErrFull.
//
// It is woken, not polling: after a refusal it subscribes to the
// semaphore's release channel, and each later refused attempt marks the
// semaphore so that the next release publishes there. It tries again when
// a release is announced, when the earliest live permit expires (the
// refusal says when), or, should a notification be lost, after a jittered
// backoff that doubles up to the WithWaitBackoff maximum, whichever comes
// first. Waiters woken together race with one attempt each; fairness is
// not promised. The subscription ends before AcquireWait returns.
func (s *Issuer) AcquireWait(ctx context.Context, name string, capacity int, ttl time.Duration) (*Permit, error) {
	if _, err := checkCall(name, capacity, ttl); err != nil {
		return nil, err
	}
	start := time.Now()
	p, err := s.wait(ctx, name, capacity, ttl)
	e := Event{Op: OpWait, Outcome: OutcomeAcquired, Name: name, Capacity: capacity, Latency: time.Since(start), Err: err}
	if err != nil {
		e.Outcome = OutcomeError
	} else {
		e.PermitID, e.Token, e.ServerTime = p.ID, p.Token, p.Granted
	}
	s.observe(ctx, e)
	return p, err
}

func (s *Issuer) wait(ctx context.Context, name string, capacity int, ttl time.Duration) (*Permit, error) {
	p, err := s.acquire(ctx, name, capacity, ttl, false)
	var full *FullError
	if !errors.As(err, &full) {
		return p, err
	}
	// Subscribing only after a refusal keeps a free permit at one round
	// trip. The subscription's confirmation is the first wake-up: the
	// attempt it triggers marks the semaphore, so a release between the
	// refusal above and the subscription is not missed.
	wake, stop := s.client.Subscribe(ctx, s.cfg.channel(name))
	defer stop()

	fallback := s.cfg.waitMin
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		// A crashed holder keeps us no longer than its permit's expiry; the
		// extra millisecond covers the expiry's rounding.
		timer.Reset(min(jittered(fallback), full.Expires+time.Millisecond))
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("semaphore: wait for %q: %w: %w", name, full, ctx.Err())
		case <-wake:
		case <-timer.C:
			fallback = doubled(fallback, s.cfg.waitMax)
		}
		p, err = s.acquire(ctx, name, capacity, ttl, true)
		if !errors.As(err, &full) {
			return p, err
		}
	}
}

// doubled returns twice d, capped at ceiling without overflowing.
func doubled(d, ceiling time.Duration) time.Duration {
	if d > ceiling/2 {
		return ceiling
	}
	return 2 * d
}

// jittered returns a delay in [d/2, d], at least a millisecond, so that
// waiters that missed the same notification do not retry in step.
func jittered(d time.Duration) time.Duration {
	return max(d/2+rand.N(d/2+1), time.Millisecond)
}
