package lock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// AcquireWait acquires name for ttl, waiting for as long as ctx allows while
// someone else holds it. It returns as soon as it acquires, with an error
// matching ctx's when ctx ends first, and at once on any error other than
// ErrHeld (a connection failure, say).
//
// It does not poll in a loop: after a refusal it subscribes to the name's
// release channel, and each later attempt that is refused marks the lock so
// that its release is published there (see the package doc); it tries again
// when a release is announced, when the holder's lease expires (the refusal
// says when), or, as a fallback for a missed notification, after a jittered
// backoff (see WithWaitBackoff), whichever comes first. Waiters that wake
// together race with one Acquire each; one wins. Fairness is not promised.
// The subscription ends before AcquireWait returns.
func (l *Locker) AcquireWait(ctx context.Context, name string, ttl time.Duration) (lease *Lease, err error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if _, err := l.checkTTL(ttl); err != nil {
		return nil, err
	}
	if l.cfg.on() {
		start := time.Now()
		defer func() { l.waitEvent(ctx, name, start, lease, err) }()
	}
	return l.acquireWait(ctx, name, ttl)
}

func (l *Locker) acquireWait(ctx context.Context, name string, ttl time.Duration) (*Lease, error) {
	lease, err := l.Acquire(ctx, name, ttl)
	var held *HeldError
	if !errors.As(err, &held) {
		return lease, err
	}

	// Subscribe only now: an uncontended acquire costs one round trip. The
	// subscription's confirmation counts as a wake-up, so a release that
	// happened before it took effect is caught by the retry it triggers;
	// that retry, and every later one, marks a lock it finds held, so the
	// release that follows is published.
	events, stop := l.client.Subscribe(ctx, l.cfg.channel(name))
	defer stop()

	timer := time.NewTimer(0)
	<-timer.C
	defer timer.Stop()
	for attempt := 0; ; attempt++ {
		wait := l.backoff(attempt)
		if held.TTL >= 0 && held.TTL+time.Millisecond < wait {
			// Expiry is the latest a crashed holder can keep us waiting;
			// the extra millisecond covers Redis' expiry precision.
			wait = held.TTL + time.Millisecond
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lock: wait for %q (%v): %w", name, held, ctx.Err())
		case <-events:
			if !timer.Stop() {
				<-timer.C
			}
		case <-timer.C:
		}
		lease, err = l.acquire(ctx, name, ttl, true)
		if !errors.As(err, &held) {
			return lease, err
		}
	}
}

// backoff returns the fallback delay before retry number attempt: doubling
// from waitMin up to waitMax, with its upper half jittered so that waiters
// that missed the same notification do not retry in step.
func (l *Locker) backoff(attempt int) time.Duration {
	d := l.cfg.waitMin
	for ; attempt > 0 && d < l.cfg.waitMax; attempt-- {
		if d > l.cfg.waitMax/2 { // doubling would pass the max, or overflow
			d = l.cfg.waitMax
			break
		}
		d *= 2
	}
	d = min(d, l.cfg.waitMax)
	return max(d/2+rand.N(d/2+1), time.Millisecond)
}
