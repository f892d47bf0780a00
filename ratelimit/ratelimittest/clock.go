package ratelimittest

import (
	"context"
	"sync"
	"time"
)

// A Clock is a time that moves only when it is told to, for a Limiter
// (WithClock) and, through Now, for anything else a test pins (such as
// ratelimit.WithServerTimeForTests, so a Redis Limiter and the double see
// the same instants). The Limiter counts in whole microseconds, as the
// scripts do. A Clock is safe for concurrent use.
type Clock struct {
	mu    sync.Mutex
	now   time.Time
	moved chan struct{} // closed and replaced on every move
}

// NewClock returns a Clock that reads t until moved. A zero Clock reads
// the zero time until moved.
func NewClock(t time.Time) *Clock { return &Clock{now: t, moved: make(chan struct{})} }

// Now returns the Clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the Clock forward by d (back, if d is negative), and wakes
// the Limiter's waits (Wait, WaitN) that d brings to their time.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set(c.now.Add(d))
}

// Set moves the Clock to t, which may be earlier: the Limiter then treats
// it as the server treats a clock stepped back.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set(t)
}

func (c *Clock) set(t time.Time) {
	c.now = t
	if c.moved != nil { // nil in a zero Clock until a sleep waits on it
		close(c.moved)
	}
	c.moved = make(chan struct{})
}

// sleep returns once the Clock reads at least t, or with ctx's error.
func (c *Clock) sleep(ctx context.Context, t time.Time) error {
	for {
		c.mu.Lock()
		if c.moved == nil {
			c.moved = make(chan struct{})
		}
		now, moved := c.now, c.moved
		c.mu.Unlock()
		if !now.Before(t) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-moved:
		}
	}
}
