package redistest

import (
	"sync"
	"time"
)

// Pauses watches how late this process runs its timers: a goroutine
// sleeps a millisecond at a time and keeps the longest it overslept. A
// timing test that misses its bound reads it to tell a machine too busy
// to run anything on time (then it tries again) from a late primitive
// (then it fails). Make it with WatchPauses; Stop it before the test
// returns.
type Pauses struct {
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	longest  time.Duration
	stopOnce sync.Once
}

// WatchPauses starts watching.
func WatchPauses() *Pauses {
	p := &Pauses{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTimer(time.Millisecond)
		defer t.Stop()
		for {
			start := time.Now()
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
			if over := time.Since(start) - time.Millisecond; over > 0 {
				p.mu.Lock()
				p.longest = max(p.longest, over)
				p.mu.Unlock()
			}
			t.Reset(time.Millisecond)
		}
	}()
	return p
}

// Longest returns the longest a timer has fired late so far.
func (p *Pauses) Longest() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.longest
}

// Stop ends the watch and returns the longest a timer fired late.
func (p *Pauses) Stop() time.Duration {
	p.stopOnce.Do(func() { close(p.stop) })
	<-p.done
	return p.Longest()
}
