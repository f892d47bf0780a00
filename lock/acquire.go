package lock

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

//go:embed acquire.lua
var acquireSource string

// acquireScript may run twice for one call (the client may send it again
// after a failed connection): the second run finds the lock holding this
// acquisition's own value and answers its token, as the first did.
var acquireScript = luascripts.NewIdempotent("lock/acquire.lua", acquireSource)

// Acquire makes one attempt to take the lock called name for ttl. On
// success the lease carries a fencing token larger than any issued for the
// name before. When the name is held it returns a *HeldError, which matches
// ErrHeld and tells the holder's token, owner and remaining TTL. It does not
// retry or wait; see AcquireWait.
//
// An Acquire that got no reply (its context ended, the connection was
// lost) may still run on the server, after it returned: a frozen or slow
// server runs the queued script when it wakes. The Locker then releases,
// in the background and by this acquisition's own id, whatever lock the
// script set, once the server answers again (within the TTL of the
// attempt; a lock it set later expires with its TTL). It never touches
// another holder's lock.
//
// A lease whose reply came after its own deadline (RequestedAt + TTL -
// the safety margin), as one that waited for slow replicas under
// WithReplicas can, is not returned: the lock may have expired on the
// server and been taken meanwhile. Acquire then releases the lock if it is
// still this acquisition's and returns an error matching ErrDeadline.
func (l *Locker) Acquire(ctx context.Context, name string, ttl time.Duration) (*Lease, error) {
	return l.acquire(ctx, name, ttl, false)
}

// acquire is Acquire; waiting marks a held lock so that its release is
// published (AcquireWait, once subscribed).
func (l *Locker) acquire(ctx context.Context, name string, ttl time.Duration, waiting bool) (*Lease, error) {
	ttl, err := l.core().CheckCall(name, 1, ttl)
	if err != nil {
		return nil, err
	}
	if l.cfg.counterTokens {
		// A counter an allkeys-* server evicts reissues tokens (ADR 0029).
		if err := l.policy.Check(ctx, l.cfg.Client); err != nil {
			return nil, errs.Call(ctx, "acquire", name, err)
		}
	}
	key := l.cfg.lockKey(name)
	lease := &Lease{
		Name: name, TTL: ttl, Owner: l.cfg.Owner,
		keys:  [2]string{key, counterKey(key)},
		value: newValue(l.cfg.Owner),
	}
	keys, args := lease.acquireArgs(l.cfg.tokenClock(), waiting)
	lease.RequestedAt = time.Now()
	var got *Lease
	if l.cfg.replicas > 0 {
		got, err = l.acquireReplicated(ctx, lease, keys, args)
	} else {
		got, err = l.acquireOne(ctx, lease, keys, args)
	}
	if err == nil && !time.Now().Before(got.Deadline(l.cfg.Margin(ttl))) {
		// The reply came after the lease's deadline (a WAIT for slow
		// replicas can outlast the TTL): the lock may have expired on the
		// server and been taken since, so the lease proves nothing. Give
		// back what is still this acquisition's (by its own id).
		_, _ = l.release(ctx, got)
		err = fmt.Errorf("lock: acquire %q: the reply came %v after the request, past the lease's deadline (TTL %v): %w",
			name, time.Since(lease.RequestedAt).Round(time.Millisecond), ttl, ErrDeadline)
		got = nil
	}
	if l.cfg.On() {
		l.acquireEvent(ctx, name, lease.RequestedAt, got, err)
	}
	return got, err
}

// acquireOne runs the acquire script for lease.
func (l *Locker) acquireOne(ctx context.Context, lease *Lease, keys []string, args []any) (*Lease, error) {
	res, err := l.run(ctx, lease.Name, acquireScript, keys, args...).Result()
	if err != nil {
		err = acquireTooOld(err)
		if leasecore.NoReply(err) {
			l.cfg.GiveBack(ctx, lease)
		}
		return nil, errs.Call(ctx, "acquire", lease.Name, err)
	}
	if err := lease.acquired(res); err != nil {
		return nil, err
	}
	return lease, nil
}

// acquireTooOld wraps with ErrRedisTooOld the error Redis 6.2 gives the
// acquire script: 6.2 runs the script, but its parser refuses the first
// command, a SET with both NX and GET (allowed from 7.0), with a bare
// "ERR syntax error" that the script returns. No other command of the
// script can be refused with those words.
func acquireTooOld(err error) error {
	if msg, ok := luascripts.ReplyMessage(err); ok && msg == "ERR syntax error" {
		return fmt.Errorf("%w (SET with NX and GET): %w", ErrRedisTooOld, err)
	}
	return err
}

// acquireArgs returns acquire.lua's KEYS and ARGV for lease.
func (lease *Lease) acquireArgs(clock any, waiting bool) ([]string, []any) {
	args := []any{lease.TTL.Milliseconds(), lease.value, clock, "w"}
	if !waiting {
		args = args[:3]
	}
	return lease.keys[:], args
}

// acquired reads acquire.lua's reply into lease, or into a HeldError.
func (lease *Lease) acquired(res any) error {
	switch r := res.(type) {
	case int64:
		if r > 0 {
			lease.Token = r
			lease.acquiredAt = lease.RequestedAt
			return nil
		}
	case []any:
		if len(r) == 3 {
			token, _ := r[0].(int64)
			value, _ := r[1].(string)
			pttl, _ := r[2].(int64)
			return &HeldError{Name: lease.Name, Token: token, Owner: ownerOf(value), TTL: time.Duration(pttl) * time.Millisecond}
		}
	}
	return fmt.Errorf("lock: acquire %q: unexpected reply %v", lease.Name, res)
}
