package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/luascripts"
)

// Client is the part of a go-redis client a Locker uses: scripts, plus
// SUBSCRIBE for AcquireWait, a pipeline for the WAIT of WithReplicas (it
// must share the acquire's connection) and CONFIG GET for Preflight.
// *redis.Client, *redis.ClusterClient, *redis.Ring and redis.UniversalClient
// satisfy it.
type Client interface {
	luascripts.Client
	Subscribe(ctx context.Context, channels ...string) *redis.PubSub
	Pipeline() redis.Pipeliner
	ConfigGet(ctx context.Context, parameter string) *redis.MapStringStringCmd
}

// Locker takes and manages locks on one Redis server. It is safe for
// concurrent use; make one per client and share it.
//
// For a name N and the prefix P (default "lock:"), the lock is the hash
// "P{N}" (fields token, owner, id; with a PX expiry), the fencing counter is
// "P{N}:token" (a plain integer with no TTL) and releases are announced on
// the channel "P{N}:released". The keys share the hash tag {N}, so every
// script touches one Cluster slot.
type Locker struct {
	client Client
	cfg    config
}

// New returns a Locker that uses client. It fails with ErrNilClient for a
// nil client and ErrInvalidOption for a bad option.
func New(client Client, opts ...Option) (*Locker, error) {
	if luascripts.IsNil(client) {
		return nil, ErrNilClient
	}
	cfg := defaults()
	for _, opt := range opts {
		if opt == nil {
			return nil, invalid("nil option")
		}
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	return &Locker{client: client, cfg: cfg}, nil
}

func (l *Locker) key(name string) string     { return l.cfg.prefix + "{" + name + "}" }
func (l *Locker) counter(name string) string { return l.key(name) + ":token" }
func (l *Locker) channel(name string) string { return l.key(name) + ":released" }

func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidName)
	}
	return nil
}

// checkTTL rejects what Redis cannot express and truncates to whole
// milliseconds, so the lease never claims more time than the server gives.
func checkTTL(ttl time.Duration) (time.Duration, error) {
	if ttl < time.Millisecond {
		return 0, fmt.Errorf("%w: %v (want ≥ 1ms)", ErrInvalidTTL, ttl)
	}
	return ttl.Truncate(time.Millisecond), nil
}

// Acquire makes one attempt to take the lock called name for ttl. On
// success the lease carries a fencing token larger than any issued for the
// name before. When the name is held it returns a *HeldError, which matches
// ErrHeld and tells the holder's token, owner and remaining TTL. It does not
// retry or wait; see AcquireWait.
func (l *Locker) Acquire(ctx context.Context, name string, ttl time.Duration) (*Lease, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	ttl, err := checkTTL(ttl)
	if err != nil {
		return nil, err
	}
	lease := &Lease{
		Name: name, TTL: ttl, Owner: l.cfg.owner,
		key: l.key(name), channel: l.channel(name), id: randomID(16),
	}
	if l.cfg.replicas > 0 {
		return l.acquireReplicated(ctx, lease)
	}
	lease.RequestedAt = time.Now()
	res, err := luascripts.LockAcquire.Run(ctx, l.client, l.acquireKeys(lease), l.acquireArgs(lease)...).Slice()
	if err != nil {
		return nil, wrap(ctx, "acquire", name, err)
	}
	if err := acquired(lease, res); err != nil {
		return nil, err
	}
	return lease, nil
}

func (l *Locker) acquireKeys(lease *Lease) []string {
	return []string{lease.key, l.counter(lease.Name)}
}

func (l *Locker) acquireArgs(lease *Lease) []any {
	return []any{lease.TTL.Milliseconds(), lease.id, lease.Owner}
}

// acquired reads the acquire script's reply into lease, or into a HeldError.
func acquired(lease *Lease, res []any) error {
	if len(res) < 2 {
		return fmt.Errorf("lock: acquire %q: unexpected reply %v", lease.Name, res)
	}
	ok, _ := res[0].(int64)
	token, _ := res[1].(int64)
	if ok == 1 {
		lease.Token = token
		return nil
	}
	if len(res) < 4 {
		return fmt.Errorf("lock: acquire %q: unexpected reply %v", lease.Name, res)
	}
	owner, _ := res[2].(string)
	pttl, _ := res[3].(int64)
	return &HeldError{Name: lease.Name, Token: token, Owner: owner, TTL: time.Duration(pttl) * time.Millisecond}
}

// Release deletes the lock if, and only if, lease still holds it. It reports
// false when the lock was already gone or someone else's: the lease had
// been lost, and whatever the caller did since it was lost was not
// protected by the lock (only by the fencing token). A release wakes the
// name's AcquireWait callers at once.
//
// go-redis retries a command after some network errors; a retried release
// that had already run reports false.
func (l *Locker) Release(ctx context.Context, lease *Lease) (bool, error) {
	if err := checkLease(lease); err != nil {
		return false, err
	}
	n, err := luascripts.LockRelease.Run(ctx, l.client, []string{lease.key}, lease.id, lease.channel, lease.Token).Int()
	if err != nil {
		return false, wrap(ctx, "release", lease.Name, err)
	}
	return n == 1, nil
}

// Extend sets the lease's TTL to ttl, counted from now, if and only if
// lease still holds the lock. It never recreates an expired lock and never
// touches another holder's: then it returns ErrNotHeld. On success it sets
// lease.TTL and lease.RequestedAt (the time the extend was sent).
func (l *Locker) Extend(ctx context.Context, lease *Lease, ttl time.Duration) error {
	if err := checkLease(lease); err != nil {
		return err
	}
	ttl, err := checkTTL(ttl)
	if err != nil {
		return err
	}
	sent := time.Now()
	if err := l.extend(ctx, lease, ttl); err != nil {
		return err
	}
	lease.RequestedAt, lease.TTL = sent, ttl
	return nil
}

func checkLease(lease *Lease) error {
	if lease == nil || lease.id == "" || lease.key == "" {
		return fmt.Errorf("%w: nil or not returned by Acquire", ErrInvalidLease)
	}
	return nil
}

// Holder reports who holds the lock called name, its token and its
// remaining TTL. It is a diagnostic: the answer may be stale by the time it
// arrives, so never decide to write on it.
func (l *Locker) Holder(ctx context.Context, name string) (Holder, error) {
	if err := checkName(name); err != nil {
		return Holder{}, err
	}
	res, err := luascripts.LockHolder.Run(ctx, l.client, []string{l.key(name)}).Slice()
	if err != nil {
		return Holder{}, wrap(ctx, "holder", name, err)
	}
	if len(res) != 3 {
		return Holder{}, fmt.Errorf("lock: holder %q: unexpected reply %v", name, res)
	}
	pttl, _ := res[2].(int64)
	if pttl == -2 {
		return Holder{}, nil
	}
	token, _ := res[0].(int64)
	owner, _ := res[1].(string)
	return Holder{Held: true, Token: token, Owner: owner, TTL: time.Duration(pttl) * time.Millisecond}, nil
}

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
