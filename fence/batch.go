package fence

import (
	"context"
	"fmt"

	"github.com/redis-primitives/go/internal/luascripts"
)

// WithBatching coalesces the fenced writes (Set, HSet, Eval and the rest)
// that goroutines make at the same moment into pipelined round trips of
// up to size script calls. The first write on an idle lane is sent at
// once, alone; writes that arrive while a batch is in flight go together
// in the next, so no write waits for a timer. Each write is still its own
// script with its own verdict: accepted or refused by the mark as it
// stands when the write runs. Only the round trips are shared.
//
//   - Order: the writes under one high-water mark (one key, or one scope)
//     are sent in the order they were made, one batch at a time per mark.
//     A write that a Cluster refused while its slot was being moved (it
//     was not applied) is sent again alone, outside the batches, so that
//     one moving slot does not hold up the writes of every other mark; it
//     may then run after later writes under its mark, and is judged by
//     the mark as it stands then.
//   - Deadlines: a write returns by its own context's deadline. A write
//     that ends before its batch is sent is not sent; one that ends while
//     its batch is in flight returns its context's error and may have
//     been applied, as with any write that times out after it was sent.
//   - No goroutine: a caller sends its batch and hands the next to a
//     waiting caller.
//
// Reads (Get, HGet, Highest) are not batched. Every client batches: a
// batch goes in one round trip per server (on a Cluster, split by the
// primary of each write's mark). New returns ErrInvalidOption for size
// below 1.
func WithBatching(size int) Option {
	return func(c *config) error {
		if size < 1 {
			return fmt.Errorf("%w: batch size %d, must be positive", ErrInvalidOption, size)
		}
		c.batch = size
		return nil
	}
}

// newBatcher returns the batcher of WithBatching(size) on client, or nil
// for size 0.
func newBatcher(client Client, size int) (*luascripts.Batcher, error) {
	if size == 0 {
		return nil, nil
	}
	b, err := luascripts.NewBatcher(client, size, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: WithBatching: %w", ErrInvalidOption, err)
	}
	return b, nil
}

// runWrite runs a write's script, batched with WithBatching in the lane of
// its mark (keys[0]), so that the writes under one mark keep their order.
func (s *Store) runWrite(ctx context.Context, script *luascripts.Script, keys []string, argv []any) luascripts.Reply {
	if s.batcher != nil {
		return s.batcher.Do(ctx, keys[0], script, keys, argv)
	}
	return script.Run(ctx, s.client, keys, argv...)
}
