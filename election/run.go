package election

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/lock"
)

// Run takes part in the election until ctx ends. Whenever this node wins a
// term it calls fn with the term and a context that is cancelled the moment
// leadership can no longer be proven (context.Cause is then a
// *DemotedError, or ctx's cause on shutdown). fn must return soon after:
// the next attempt, and the release, wait for it.
//
// A term ends when:
//   - a renewal finds the lease gone (ReasonLeaseLost);
//   - the local deadline passes without a successful renewal: the send time
//     of the last one + TTL - SafetyMargin, on the monotonic clock. Redis
//     errors before it are ridden out and retried; none after it
//     (ReasonUnreachable, or ReasonDeadlinePassed when the process itself
//     was not running at the deadline);
//   - fn returns, or Resign is called (ReasonResigned): the lease is
//     released and this node sits out one RetryInterval before contending
//     again, so another node can take over;
//   - a write through the term's Fencer is refused as stale
//     (ReasonFencedOut): a newer term has written, so this one can write
//     nothing more. The lease is released and this node sits out one
//     RetryInterval, as on resigning. fn must stop on fence.ErrStale: its
//     context is cancelled, and an error it returns then is dropped;
//   - ctx ends (ReasonStopped): the lease is released after fn returns, so
//     a follower takes over at once, not a TTL later.
//
// A follower waits without polling in a loop: a release wakes it at once,
// and otherwise it attempts when the leader's lease would expire (each
// refusal says when) or after RetryInterval, whichever is sooner.
//
// fn may be nil: Run then only holds leadership, and other goroutines act
// through Term. If fn returns an error while its term is still valid, Run
// releases the lease and returns that error; an error fn returns after its
// context was cancelled is taken for the cancellation and dropped.
// Run also returns, without retrying, an error that retrying cannot fix:
// a server that refuses this node's credentials (a wrong password,
// WRONGPASS; none given where one is required, NOAUTH), refuses the
// election's commands (an ACL without them, NOPERM), does not have them (a
// Redis too old: lock.ErrRedisTooOld), or holds a key of another type under
// the election's keys (WRONGTYPE). Match it as the client's error replies
// (errors.As with redis.Error on go-redis), or with errors.Is for
// lock.ErrRedisTooOld. Other Redis errors are retried every
// RetryInterval. Every failed attempt, retried or not, is reported to
// Config.Hook and Config.Logger, and Healthy fails once Redis
// has answered none of this node's attempts for longer than TTL +
// RetryInterval.
// Otherwise Run returns when ctx ends, with an error matching ctx.Err(),
// after releasing any lease and with no goroutine of its own left. Run
// returns ErrRunning if this Elector is already running.
//
// fn runs on a goroutine of its own: a panic in fn ends the program, as in
// any goroutine, rather than reaching Run's caller; a fn that ends its
// goroutine with runtime.Goexit ends its term as an error would.
func (e *Elector) Run(ctx context.Context, fn func(ctx context.Context, term Term) error) error {
	if err := e.ready(); err != nil {
		return err
	}
	if !e.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer e.running.Store(false)

	for {
		e.contending(time.Now())
		lease, err := e.contend(ctx)
		if ctx.Err() != nil || err == nil {
			e.contending(time.Time{}) // leading, or stopped; an attempt's error stays for Healthy
		}
		if err != nil {
			return fmt.Errorf("election: run %q: %w", e.cfg.Name, err)
		}
		reason, err := e.lead(ctx, lease, fn)
		if err != nil {
			return fmt.Errorf("election: run %q: epoch %d: %w", e.cfg.Name, lease.Token, err)
		}
		if (reason == ReasonResigned || reason == ReasonFencedOut) && !sleep(ctx, e.cfg.RetryInterval) {
			return fmt.Errorf("election: run %q: %w", e.cfg.Name, ctx.Err())
		}
	}
}

// contend attempts until this node holds the lease or ctx ends. "follower"
// is reported at the first refusal only.
func (e *Elector) contend(ctx context.Context) (*lock.Lease, error) {
	told := false
	for {
		lease, err := e.locker.Acquire(ctx, e.cfg.Name, e.cfg.TTL)
		if leader, held := heldBy(err); held {
			if !told {
				e.report(ctx, Event{Op: opFollower, Outcome: outcomeOK, Epoch: leader.Epoch, Leader: leader})
				told = true
			}
			e.see(ctx, leader)
			// Blocks until a release notification, the lease's expiry or
			// the fallback retry lets it win; returns at once on any
			// other error.
			lease, err = e.waitWatching(ctx)
		}
		if err == nil {
			return lease, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The failed attempt has been reported (reportLock), and logged.
		if permanent(err) {
			return nil, err
		}
		// Redis failed us, for now: try again later.
		if !sleep(ctx, e.cfg.RetryInterval) {
			return nil, ctx.Err()
		}
	}
}

// waitWatching waits for the lease (lock's AcquireWait). When a Hook
// wants leader changes, a second goroutine meanwhile asks who leads every
// RetryInterval, so that a term passing between two other nodes is seen;
// it has stopped when waitWatching returns. Without a Hook, it costs
// nothing.
func (e *Elector) waitWatching(ctx context.Context) (*lock.Lease, error) {
	if e.cfg.Hook == nil {
		return e.locker.AcquireWait(ctx, e.cfg.Name, e.cfg.TTL)
	}
	wctx, stop := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		t := time.NewTicker(e.cfg.RetryInterval)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
			}
			h, err := e.locker.Holder(wctx, e.cfg.Name)
			if err == nil && h.Held && wctx.Err() == nil {
				e.see(wctx, leaderInfo(h.Owner, h.Token, h.TTL))
			}
		}
	}()
	lease, err := e.locker.AcquireWait(ctx, e.cfg.Name, e.cfg.TTL)
	stop()
	<-watched // from here on, only this goroutine sees leader changes
	return lease, err
}

// lead holds the term of lease until it ends, and says why. It returns an
// error only when fn failed while still leading.
func (e *Elector) lead(ctx context.Context, lease *lock.Lease, fn func(context.Context, Term) error) (Reason, error) {
	// The Keeper is the step-down rule: it renews every RenewInterval and
	// cancels its context when a renewal finds the lease gone or when the
	// local deadline passes without a successful renewal.
	k, err := e.locker.Keep(ctx, lease, e.cfg.RenewInterval)
	switch {
	case errors.Is(err, lock.ErrLeaseLost):
		// The acquire came back too late to trust (a server coming back
		// up) and the renewal that would have proven it failed: this term
		// never began. Contend again.
		e.release(ctx, lease)
		return ReasonLeaseLost, nil
	case err != nil: // ruled out by Config validation; do not hold a lease we cannot keep
		e.release(ctx, lease)
		return ReasonStopped, fmt.Errorf("keep the lease: %w", err)
	}
	stale := newStaleSignal()
	term := Term{Epoch: lease.Token, Fencer: Fencer{f: e.fence.Fencer(lease.Token), end: stale}}
	ctl := &termCtl{resign: make(chan struct{}), done: make(chan struct{})}
	defer close(ctl.done)
	e.setTerm(term, k, ctl)
	elected := time.Now()
	e.see(ctx, LeaderInfo{NodeID: e.cfg.NodeID, Value: e.cfg.Value, Epoch: term.Epoch, TTL: e.cfg.TTL})
	e.report(ctx, Event{Op: opElected, Outcome: outcomeOK, Epoch: term.Epoch})

	// fn's context is not the Keeper's, so that its cause can say why the
	// term ended in this package's terms.
	fnCtx, cancelFn := context.WithCancelCause(ctx)
	defer cancelFn(nil)
	var fnDone chan error
	if fn != nil {
		fnDone = make(chan error, 1)
		go func() {
			// From a defer, so that a fn that ends its goroutine with
			// runtime.Goexit still ends the term instead of leading on.
			var err error = errGoexit
			defer func() { fnDone <- err }()
			err = fn(fnCtx, term)
		}()
	}

	var reason Reason
	var fnErr error
	fnReturned := false
	select {
	case <-k.Context().Done():
		reason = e.why(ctx, k)
	case <-stale.ch:
		reason = e.fencedOut(ctx, k)
	case <-ctl.resign:
		reason = ReasonResigned
		if ended(ctx, k) {
			reason = e.why(ctx, k)
		}
	case fnErr = <-fnDone:
		fnReturned = true
		reason = ReasonResigned
		switch {
		case ended(ctx, k):
			reason, fnErr = e.why(ctx, k), nil
		case stale.fired(): // fn stopped on ErrStale, as it should
			reason, fnErr = e.fencedOut(ctx, k), nil
		}
	}
	e.clearTerm()
	cancelFn(&DemotedError{Epoch: term.Epoch, Reason: reason})
	held := time.Since(elected)
	e.report(ctx, Event{Op: opDemoted, Outcome: outcomeOK, Epoch: term.Epoch, Reason: reason, Held: held})

	if fn != nil && !fnReturned {
		<-fnDone // fn's context is cancelled; its error is that
	}
	_ = k.Stop()
	if reason != ReasonLeaseLost {
		// Only now, with fn done: a successor may start at once. After a
		// missed deadline the lease may still be ours on the server for
		// up to the safety margin; release bounds the attempt by that.
		renewed := k.Lease()
		e.release(ctx, &renewed)
	}
	if reason == ReasonResigned && fnErr != nil {
		return reason, fnErr
	}
	return reason, nil
}

// ended reports whether the term k keeps had ended anyway when fn returned,
// Resign was called or a write was refused as stale. Run's ctx is asked
// too, and first: the contexts derived from it learn of its end one after
// another, so fn's may have been cancelled, and fn returned, before the
// Keeper's is.
func ended(ctx context.Context, k *lock.Keeper) bool {
	return ctx.Err() != nil || k.Context().Err() != nil
}

// why classifies the end of the term k kept. The Keeper says whether a
// renewal found the lease gone or the deadline passed; how late this
// goroutine woke after that deadline tells a process that was not running
// (paused, frozen) from one whose renewals Redis did not answer: the
// Keeper fires at the deadline when the process runs.
func (e *Elector) why(ctx context.Context, k *lock.Keeper) Reason {
	err := k.Err()
	switch {
	case ctx.Err() != nil:
		return ReasonStopped
	case errors.Is(err, lock.ErrNotHeld):
		return ReasonLeaseLost
	case errors.Is(err, lock.ErrDeadline):
		return e.late(k)
	}
	return ReasonStopped
}

// late classifies a term whose deadline has passed.
func (e *Elector) late(k *lock.Keeper) Reason {
	if time.Since(k.Deadline()) > e.cfg.RenewInterval {
		return ReasonDeadlinePassed
	}
	return ReasonUnreachable
}

// fencedOut classifies the end of a term whose write was refused as stale.
// A process waking from a pause past its deadline writes before its
// renewal goroutine runs: that term had already ended by the clock, and
// says why; only a term still within its deadline was fenced out.
func (e *Elector) fencedOut(ctx context.Context, k *lock.Keeper) Reason {
	switch {
	case ended(ctx, k):
		return e.why(ctx, k)
	case !time.Now().Before(k.Deadline()):
		return e.late(k)
	}
	return ReasonFencedOut
}

// permanent reports whether err, from an attempt to take the lease, is one
// that retrying cannot fix, so Run returns it instead of retrying until its
// context ends: a name lock refuses; or a server that refuses this node's
// credentials (WRONGPASS, NOAUTH), refuses the commands (an ACL without
// them: NOPERM, or the error of a script that ran one), does not know them
// (a Redis too old for the scripts: lock.ErrRedisTooOld, unknown command, a
// script that does not compile), or finds a key of another type where the
// election's keys belong (WRONGTYPE).
// Anything else (a connection lost, a timeout, LOADING, READONLY during a
// failover, BUSY, OOM) may pass, and is retried.
func permanent(err error) bool {
	if errors.Is(err, lock.ErrInvalidName) || errors.Is(err, lock.ErrRedisTooOld) {
		return true
	}
	msg, ok := luascripts.ReplyMessage(err)
	if !ok {
		return false
	}
	for _, code := range []string{"NOPERM", "WRONGTYPE", "WRONGPASS", "NOAUTH"} {
		// A script's error keeps the code first (Redis 7) or names it
		// after the script's location (Redis 6).
		if strings.HasPrefix(msg, code+" ") || strings.Contains(msg, ": "+code+" ") {
			return true
		}
	}
	// Redis 7.0 reports a command its ACL refuses inside a script without
	// the NOPERM code.
	for _, p := range []string{"ERR unknown command", "ERR unknown subcommand", "ERR Error compiling script",
		"ERR The user executing the script can't run this command"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// release gives the lease back (compare-and-delete, so never a successor's)
// even after ctx ended, waiting no longer than the lease has left: past its
// expiry there is nothing of ours to release. The outcome does not matter
// to Run: a lease not released expires on its own.
func (e *Elector) release(ctx context.Context, lease *lock.Lease) {
	left := time.Until(lease.RequestedAt.Add(lease.TTL))
	if left <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), left)
	defer cancel()
	_, _ = e.locker.Release(ctx, lease)
}

// errGoexit is what lead sees of a fn that ended its goroutine with
// runtime.Goexit instead of returning.
var errGoexit = errors.New("election: fn ended its goroutine without returning")

// sleep waits for d or for ctx to end, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
