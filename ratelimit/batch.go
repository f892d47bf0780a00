package ratelimit

import (
	"fmt"

	"github.com/redis-primitives/go/internal/luascripts"
)

// WithBatching coalesces the decisions that goroutines make at the same
// moment into round trips of up to size calls. Calls go to one of two
// lanes by their key. The first call on an idle lane is sent at once,
// alone; calls that arrive while the lane's batch is in flight wait for it
// and go together in the next, so no call waits for a timer.
//
// A batch's decisions (Allow, AllowN, Take) are made by one script call
// per server: per primary on a Redis Cluster, where they are grouped by
// the node that owns their keys (ADR 0018). The script reads the server's
// clock once for them all and makes each decision as it would be made
// alone, in the batch's order: all-or-nothing across a Policy's limits,
// exact, a key's decisions in arrival order. A call of the batch that the
// server refuses (a slot moved or migrating, a key it does not hold) is
// refused before it writes anything, and its decisions are sent again one
// by one, following the Cluster's redirects. Peek and Reset, and a
// decision alone on its node, are sent as their own script calls in the
// same round trip. On a Ring, or a client that cannot tell which primary
// serves a key, every decision is its own script call.
//
//   - Order: a key's calls are sent in the order they arrived, and one
//     batch at a time is in flight for a key, so a key's decisions are
//     made in arrival order, a Policy's included.
//   - Deadlines: a call returns by its own context's deadline. A call that
//     ends before its batch is sent is not sent (nothing consumed); one
//     that ends while its batch is in flight returns its context's error,
//     and its request may have been decided, as with any call that times
//     out after it was written.
//   - At most once: a batch's script call is sent once; if its reply is
//     lost, every call in it ends with ErrReplyLost.
//   - No goroutine: the caller that finds its lane idle sends; when a
//     batch ends, its sender hands the next one to a waiting caller.
//
// Every Client can batch. New returns ErrInvalidOption for a size below 1.
func WithBatching(size int) Option {
	return func(c *config) error {
		if size < 1 {
			return fmt.Errorf("%w: batch size %d, must be positive", ErrInvalidOption, size)
		}
		c.batch = size
		return nil
	}
}

// newBatcher returns the batcher of WithBatching(size) on client.
func newBatcher(client Client, size int) (*luascripts.Batcher, error) {
	b, err := luascripts.NewBatcher(client, size, sendBatch)
	if err != nil {
		return nil, fmt.Errorf("%w: WithBatching: %w", ErrInvalidOption, err)
	}
	return b, nil
}
