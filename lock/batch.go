package lock

import (
	"context"

	"github.com/redis-primitives/go/internal/luascripts"
)

// WithBatching coalesces the acquires, releases and renewals (Extend, and
// the Keeper's and WithLock's) that goroutines make at the same moment
// into shared round trips of up to size script calls. The first call
// on an idle lane is sent at once, alone; calls that arrive while a batch
// is in flight go together in the next, so no call waits for a timer.
// Each call is still its own script, with every guarantee of the package:
// a lease's token, its deadline (counted from before the call waited for
// its batch, so never later than the server's expiry) and at-most-once
// releases. Only the round trips are shared.
//
//   - Order: the calls on one name are sent in the order they were made,
//     one batch at a time per name. A call that a Cluster refused while
//     its slot was being moved (it did not run) is sent again alone,
//     outside the batches, so that one moving slot does not hold up the
//     calls on every other name; it may then run after later calls on its
//     name, which were concurrent with it.
//   - Deadlines: a call returns by its own context's deadline. A call that
//     ends before its batch is sent is not sent; one that ends while its
//     batch is in flight returns its context's error, and may have run, as
//     with any call that times out after it was written (an acquire's
//     lock, if taken, is given back as after any lost reply).
//   - No goroutine: a caller sends its batch, and hands the next to a
//     waiting caller.
//
// With WithReplicas, acquires and renewals are not batched: each needs a
// WAIT of its own on its connection, after its own script, before its
// lease is returned or extended; releases, which WithReplicas does not
// wait for, are. On a Cluster the client splits each batch by the primary
// of its names, one round trip per primary. A size below 1 is
// ErrInvalidOption.
func WithBatching(size int) Option {
	return func(c *config) error {
		if size < 1 {
			return invalid("batch size %d, must be positive", size)
		}
		c.batch = size
		return nil
	}
}

// newBatcher returns the batcher of WithBatching, or nil without it.
func newBatcher(client Client, size int) (*luascripts.Batcher, error) {
	if size == 0 {
		return nil, nil
	}
	b, err := luascripts.NewBatcher(client, size, nil)
	if err != nil {
		return nil, invalid("WithBatching: %v", err)
	}
	return b, nil
}

// run runs s for the lock name, batched with WithBatching: a name's calls
// share a lane, so they are sent in the order they were made.
func (l *Locker) run(ctx context.Context, name string, s *luascripts.Script, keys []string, args ...any) luascripts.Reply {
	if l.batch != nil {
		return l.batch.Do(ctx, name, s, keys, args)
	}
	return s.Run(ctx, l.cfg.Client, keys, args...)
}
