package luascripts

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"
)

// A Batcher coalesces the script calls that goroutines make at the same
// moment into pipelined round trips of up to size calls; each primitive's
// WithBatching option makes one. Calls go to one of two lanes by a key the
// primitive chooses (a rate limit's user key, a lock's name). The first
// call on an idle lane is sent at once, alone; calls that arrive while the
// lane's batch is in flight wait for it and go together in the next, so no
// call waits for a timer. Each call is still its own script call, with
// every guarantee of its primitive; only the round trips are shared
// (unless an Exec sends a batch otherwise).
//
//   - Order: a key's calls are sent in the order they arrived, and one
//     batch at a time is in flight for a key, so a key's calls run in
//     arrival order. Keys are spread over two lanes, each with its own
//     batch in flight, so that one lane's batch runs on the server while
//     the other's replies are read.
//   - Migrations: with the default Exec, a call that a Cluster refused
//     because its slot is being moved (it did not run) leaves the batch
//     and is sent again by its own caller, alone, as Run sends it, until
//     the migration lets it run or its time is up; the lane goes on
//     meanwhile. So one migrating slot holds up only the calls on its
//     keys, not every call of the lane, and a refused call may run after
//     calls on its key that arrived later (they are concurrent with it).
//   - Deadlines: a call returns by its own context's deadline. A call that
//     ends before its batch is sent is not sent (it did not run); one that
//     ends while its batch is in flight returns its context's error,
//     wrapped with ErrSentThenEnded: it may have run, as with any call that
//     times out after it was written. The call that sends a batch is one
//     with the latest deadline in it; a cancellation (not a deadline) of
//     that call takes effect when the round trip ends.
//   - No goroutine: the caller that finds its lane idle sends; when a
//     batch ends, its sender hands the next one to a waiting caller.
type Batcher struct {
	seed  maphash.Seed
	lanes [2]lane
}

// An Exec sends one batch's calls on c and sets each call's Reply and
// Err. The calls are in arrival order; ctx carries the batch's deadline,
// the latest of its calls'. The default is SendOnce, each call a
// migrating slot refused then sent again by its caller (see Batcher).
type Exec func(ctx context.Context, c Client, calls []Call)

// ErrSentThenEnded wraps the context error of a batched call that ended
// while its batch was in flight.
var ErrSentThenEnded = errors.New("the context ended while its batch was in flight; the call may have run")

// NewBatcher returns a Batcher that sends batches of up to size calls on
// client (in one round trip per server: Client.Eval) with exec, or the
// default if exec is nil. size must be positive.
func NewBatcher(client Client, size int, exec Exec) (*Batcher, error) {
	if size < 1 {
		return nil, fmt.Errorf("batch size %d, must be positive", size)
	}
	resendAlone := exec == nil
	if exec == nil {
		exec = SendOnce
	}
	b := &Batcher{seed: maphash.MakeSeed()}
	for i := range b.lanes {
		b.lanes[i] = lane{client: client, max: size, exec: exec, resendAlone: resendAlone}
	}
	return b, nil
}

// Do runs s with keys and args in the lane of key, in a batch with the
// calls of the same moment, and returns its outcome, as Run would. Calls
// with the same key run in the order Do was called.
func (b *Batcher) Do(ctx context.Context, key string, s *Script, keys []string, args []any) Reply {
	return b.lane(key).do(ctx, s, keys, args)
}

// Why two lanes: the Batcher spreads calls over its lanes by the hash of
// their key, so that all of a key's calls go through one lane. Two lanes, not one: with one batch in flight the
// server idles while the client reads a batch's replies and the client
// idles while the server decides the next; with two they overlap.
// Measured with go test -bench AllowBatched/batch=64 (50 goroutines, 10k
// keys, 2 cores): 1 lane 16.3 µs/op, 2 lanes 12.6-13.4, 4 lanes 13.0-13.1,
// 8 and 16 lanes 14.2-14.4; unbatched 18.5-20.2.
// lane returns the lane of the calls on key.
func (b *Batcher) lane(key string) *lane {
	return &b.lanes[maphash.String(b.seed, key)%uint64(len(b.lanes))]
}

// A lane sends one batch at a time. busy is set while a batch is in
// flight; calls arriving meanwhile queue in pending, in arrival order.
type lane struct {
	client      Client
	max         int
	exec        Exec
	resendAlone bool // the default Exec: a call a migration refused is sent again by its caller
	mu          sync.Mutex
	busy        bool
	pending     []*batchCall
}

// A call's state, guarded by its lane's mutex.
const (
	callPending = iota // queued
	callLeading        // handed a batch to send
	callSent           // in a batch being sent by another call
	callDone           // cmd holds the reply
)

// A batchCall is one script call waiting to be sent.
type batchCall struct {
	ctx    context.Context
	script *Script
	keys   []string
	args   []any
	state  int
	batch  []*batchCall  // when leading: the batch to send, self included
	reply  Reply         // when done: the outcome
	moved  bool          // when done: refused by a migrating slot, to be sent again alone
	wake   chan struct{} // one send: done, or leading
}

func (b *lane) do(ctx context.Context, s *Script, keys []string, args []any) Reply {
	if err := ctx.Err(); err != nil {
		return Reply{Err: err}
	}
	c := &batchCall{ctx: ctx, script: s, keys: keys, args: args, wake: make(chan struct{}, 1)}
	b.mu.Lock()
	if !b.busy {
		b.busy = true
		c.state = callLeading
		b.mu.Unlock()
		b.send(c, []*batchCall{c})
		return b.finish(c)
	}
	b.pending = append(b.pending, c)
	b.mu.Unlock()

	select {
	case <-c.wake:
	case <-ctx.Done():
		b.mu.Lock()
		switch c.state {
		case callPending:
			b.remove(c)
			b.mu.Unlock()
			return Reply{Err: ctx.Err()}
		case callSent:
			b.mu.Unlock()
			return Reply{Err: fmt.Errorf("%w: %w", ctx.Err(), ErrSentThenEnded)}
		}
		b.mu.Unlock()
		<-c.wake // leading or done: the wake-up is sent or on its way
	}
	if c.state == callLeading {
		b.send(c, c.batch)
	}
	return b.finish(c)
}

// finish returns c's outcome; a call a migrating slot refused is first
// sent again, alone, outside the lane (see Batcher).
func (b *lane) finish(c *batchCall) Reply {
	if !c.moved || c.ctx.Err() != nil {
		return c.reply
	}
	return c.script.Run(c.ctx, b.client, c.keys, c.args...)
}

// remove drops c from pending, keeping the others' order. The caller
// holds b.mu.
func (b *lane) remove(c *batchCall) {
	for i, p := range b.pending {
		if p == c {
			b.pending = append(b.pending[:i], b.pending[i+1:]...)
			return
		}
	}
}

// send sends batch, of which lead is the call with the latest deadline,
// delivers every reply, then hands the next batch, if any, to one of its
// callers.
func (b *lane) send(lead *batchCall, batch []*batchCall) {
	live := make([]*batchCall, 0, len(batch))
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.reply = Reply{Err: err} // not sent
			continue
		}
		live = append(live, c)
	}
	if len(live) > 0 {
		// Deadline: lead's, the latest of the batch; cancellation: none,
		// the batch carries the others' calls.
		ctx := context.WithoutCancel(lead.ctx)
		if dl, ok := lead.ctx.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, dl)
			defer cancel()
		}
		b.run(ctx, live)
	}

	b.mu.Lock()
	for _, c := range batch {
		c.state = callDone
	}
	next := b.take()
	b.mu.Unlock()
	for _, c := range batch {
		if c != lead {
			c.wake <- struct{}{}
		}
	}
	if next != nil {
		next.wake <- struct{}{}
	}
}

// run sends the calls with the lane's Exec (SendOnce by default: one
// round trip per server, the few calls the server answers NOSCRIPT once
// more with their source, after the others of the batch: concurrent
// calls, whose order no caller can observe).
func (b *lane) run(ctx context.Context, calls []*batchCall) {
	batch := make([]Call, len(calls))
	for i, c := range calls {
		batch[i] = Call{Script: c.script, Keys: c.keys, Args: c.args}
	}
	b.exec(ctx, b.client, batch)
	for i, c := range calls {
		c.reply = batch[i].Result()
		c.moved = b.resendAlone && migrating(&batch[i])
	}
}

// take forms the next batch from pending, up to max calls in arrival
// order, and picks its sender: the call with the latest deadline (none is
// latest), so the round trip's deadline cuts no call short. It returns
// nil, and marks the lane idle, when nothing waits. The caller holds
// b.mu.
func (b *lane) take() *batchCall {
	if len(b.pending) == 0 {
		b.busy = false
		return nil
	}
	k := min(len(b.pending), b.max)
	batch := make([]*batchCall, k)
	copy(batch, b.pending)
	b.pending = append(b.pending[:0], b.pending[k:]...)
	lead, latest := batch[0], time.Time{}
	for _, c := range batch {
		dl, ok := c.ctx.Deadline()
		if !ok {
			lead = c
			break
		}
		if dl.After(latest) {
			lead, latest = c, dl
		}
	}
	for _, c := range batch {
		c.state = callSent
	}
	lead.state, lead.batch = callLeading, batch
	return lead
}
