// Package keep is the loop behind a Keeper: something held on the server
// for a time (a lease, a permit, a reservation) renewed in the background
// every interval until it is stopped, its context ends, or it is lost. It
// is lost when a renewal proves it gone, or when its local deadline passes
// with no renewal succeeding; a renewal that fails otherwise (a timeout, a
// refused connection) is tried again until that deadline. Its Context
// ends with the cause of the loss, so work done under it stops when what
// it holds can no longer be proven.
//
// It is the one renewal loop of the project: ratelimit's reservation
// Keeper runs it, and so does the lease core's Keeper under lock's and
// semaphore's (which proves a late lease before it starts the loop). It
// knows nothing of what it keeps, so each of them imports it and neither
// imports the other.
package keep

import (
	"context"
	"sync"
	"time"
)

// MinEvery is the shortest interval between renewals. A server keeps
// expiries in whole milliseconds, so renewing more often cannot move one;
// and an interval of a few nanoseconds, time.Duration(10) meant as ten
// seconds, would renew tens of thousands of times a second.
const MinEvery = time.Millisecond

// A Config is what a Keeper renews and how.
type Config struct {
	// Every is the interval between renewals; its callers refuse one under
	// MinEvery.
	Every time.Duration
	// Deadline is the local time until which what is kept can be trusted
	// now, without a renewal.
	Deadline time.Time
	// Renew renews what is kept, by ctx's deadline (Deadline at most), and
	// returns its new local deadline.
	Renew func(ctx context.Context) (time.Time, error)
	// Gone reports whether a renewal's error proves what is kept gone:
	// the Keeper ends at once. Other errors are tried again.
	Gone func(err error) bool
	// Lost returns the cause of the loss: gone is the error that proved it
	// gone, or nil when the deadline passed, last being then the last
	// failed renewal's error (or nil). It is called once, in the Keeper's
	// goroutine, with its Context, before that ends.
	Lost func(ctx context.Context, gone, last error) error
}

// A Keeper runs one Config's renewals in a goroutine of its own.
type Keeper struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	quit   chan struct{} // closed by Stop
	exited chan struct{} // closed when the loop has returned
	once   sync.Once

	mu       sync.Mutex
	deadline time.Time // as last renewed
	lost     error     // why it was lost, once it was
}

// Start starts renewing as c says until Stop, until ctx ends or until what
// is kept is lost. The first renewal comes after one interval, or sooner
// when the deadline is nearer: halfway to it when less than two intervals
// are left, at once when less than one is (an acquire that came back
// late).
func Start(ctx context.Context, c Config) *Keeper {
	k := &Keeper{quit: make(chan struct{}), exited: make(chan struct{}), deadline: c.Deadline}
	k.ctx, k.cancel = context.WithCancelCause(ctx)
	go k.loop(c)
	return k
}

// Context is cancelled when what is kept is lost, with the cause Lost
// returned, and when Stop is called or the parent ends.
func (k *Keeper) Context() context.Context { return k.ctx }

// Deadline returns the local deadline as last renewed.
func (k *Keeper) Deadline() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.deadline
}

// Err returns nil while what is kept is held, and the cause of its loss
// after.
func (k *Keeper) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lost
}

// Stop ends the renewals, waits for the renewal goroutine to exit, and
// returns the cause of the loss, if what was kept was lost, or nil. It is
// safe to call more than once.
func (k *Keeper) Stop() error {
	k.once.Do(func() { close(k.quit) })
	<-k.exited
	k.cancel(context.Canceled)
	return k.Err()
}

type renewed struct {
	deadline time.Time
	err      error
}

func (k *Keeper) loop(c Config) {
	defer close(k.exited)
	first := min(c.Every, time.Until(c.Deadline)/2)
	if time.Until(c.Deadline) < c.Every {
		first = 0
	}
	tick := time.NewTimer(first)
	defer tick.Stop()
	deadline := time.NewTimer(time.Until(c.Deadline))
	defer deadline.Stop()

	// Each renewal runs in a goroutine of its own, so that the deadline
	// fires on time however long a call blocks; calls end on stop, and the
	// loop waits for the one in flight before it returns.
	calls, endCalls := context.WithCancel(context.WithoutCancel(k.ctx))
	done := make(chan renewed, 1)
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
			k.lose(c.Lost(k.ctx, nil, last))
			return
		case <-tick.C:
			pending = true
			go func(by time.Time) {
				ctx, cancel := context.WithDeadline(calls, by)
				defer cancel()
				d, err := c.Renew(ctx)
				done <- renewed{d, err}
			}(c.Deadline)
		case r := <-done:
			pending = false
			switch {
			case r.err == nil:
				last, c.Deadline = nil, r.deadline
				k.mu.Lock()
				k.deadline = r.deadline
				k.mu.Unlock()
				deadline.Reset(time.Until(c.Deadline))
				tick.Reset(c.Every)
			case c.Gone(r.err):
				k.lose(c.Lost(k.ctx, r.err, nil))
				return
			default: // transient as far as anyone can tell; the deadline decides
				last = r.err
				tick.Reset(max(c.Every/4, time.Millisecond))
			}
		}
	}
}

func (k *Keeper) lose(cause error) {
	k.mu.Lock()
	k.lost = cause
	k.mu.Unlock()
	k.cancel(cause)
}
