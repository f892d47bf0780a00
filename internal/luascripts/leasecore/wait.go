package leasecore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// Wait makes attempts with try until one is not refused, for as long as
// ctx allows. refused reports whether an attempt's error is a refusal
// (the name is held, the semaphore full), and how long until the earliest
// holder's lease expires (negative when unknown): the longest a crashed
// holder can keep a waiter waiting.
//
// Wait returns the first attempt's outcome at once unless it is a
// refusal; then it subscribes to channel, and tries again (with waiting
// set, so that the attempt marks the name and the next release publishes
// on channel) when a release is announced, when the earliest holder's
// lease expires, or, should a notification be lost, after a jittered
// backoff from o's minimum doubling to its maximum (a wake-up by a
// release does not double it), whichever comes first. When ctx ends first
// it returns an error matching the last refusal and ctx's error. The
// subscription ends before Wait returns.
func Wait[T any](ctx context.Context, c luascripts.Client, o *Options, name, channel string,
	try func(waiting bool) (T, error), refused func(error) (expires time.Duration, ok bool)) (T, error) {
	got, err := try(false)
	expires, ok := refused(err)
	if !ok {
		return got, err
	}
	// Subscribing only after a refusal keeps an uncontended acquire at one
	// round trip. The subscription's confirmation is the first wake-up: the
	// attempt it triggers marks the name, so a release between the refusal
	// above and the subscription is not missed.
	wake, stop := c.Subscribe(ctx, channel)
	defer stop()

	fallback := o.waitMin
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := jittered(fallback)
		if expires >= 0 {
			// The extra millisecond covers Redis' expiry precision.
			wait = min(wait, expires+time.Millisecond)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			var zero T
			return zero, fmt.Errorf("%s: wait for %q: %w: %w", o.Errs.pkg, name, err, ctx.Err())
		case <-wake:
		case <-timer.C:
			fallback = o.backoff(fallback)
		}
		got, err = try(true)
		if expires, ok = refused(err); !ok {
			return got, err
		}
	}
}
