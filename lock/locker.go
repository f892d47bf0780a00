package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
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
// For a name N and the prefix P (default "lock:"), the lock is the string
// "P{N}" holding "<id> <owner>" (the acquisition's random id and the
// Locker's owner label; "*" in front once an AcquireWait caller waits for
// its release) with a PX expiry, the fencing counter is "P{N}:token" (a
// plain integer with no TTL; while the lock is held it is the holder's
// token) and releases are announced on the channel "P{N}:released". The
// keys share the hash tag {N}, so every script touches one Cluster slot.
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

// counterSuffix ends a counter's key; the lock's key is the rest of it.
const counterSuffix = ":token"

// counter returns the name's counter key, followed when id is not nil by
// the lock's value "<id> <owner>", in one allocation: the lock's key is the
// counter's without counterSuffix, and callers slice it, the counter's and
// the value out of the one string.
func (l *Locker) counter(name string, id []byte) string {
	n := len(l.cfg.prefix) + len(name) + 2 + len(counterSuffix)
	if id != nil {
		n += valueLen(l.cfg.owner)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(l.cfg.prefix)
	b.WriteByte('{')
	b.WriteString(name)
	b.WriteByte('}')
	b.WriteString(counterSuffix)
	if id != nil {
		b.Write(id)
		b.WriteByte(' ')
		b.WriteString(l.cfg.owner)
	}
	return b.String()
}

// keys returns the lock's key and its counter's, for the scripts' KEYS.
func (l *Locker) keys(name string) [2]string {
	c := l.counter(name, nil)
	return [2]string{c[:len(c)-len(counterSuffix)], c}
}

// channel returns the name's release channel, which lock_release.lua
// names the same way from the lock's key.
func (l *Locker) channel(name string) string { return l.cfg.prefix + "{" + name + "}:released" }

func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidName)
	}
	if name[0] == '}' {
		// "P{}…" has an empty hash tag, which Redis ignores: the lock and
		// its counter would hash to different Cluster slots.
		return fmt.Errorf("%w: %q starts with '}', which would empty the keys' hash tag", ErrInvalidName, name)
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
	return l.acquire(ctx, name, ttl, false)
}

// acquisition is a Lease and the arguments of its acquire script, allocated
// together. go-redis writes a *int64 or *string argument as its value, and
// a pointer goes into an interface without an allocation of its own.
type acquisition struct {
	lease Lease
	ttlMS int64
	args  [3]any
}

// acquire is Acquire; waiting marks a held lock so that its release is
// published (AcquireWait, once subscribed).
func (l *Locker) acquire(ctx context.Context, name string, ttl time.Duration, waiting bool) (*Lease, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	ttl, err := checkTTL(ttl)
	if err != nil {
		return nil, err
	}
	a := &acquisition{ttlMS: ttl.Milliseconds()}
	lease := &a.lease
	lease.Name, lease.TTL, lease.Owner = name, ttl, l.cfg.owner
	// One string holds the counter's key, hence the lock's, and the value.
	id := newID()
	s := l.counter(name, id[:])
	n := len(s) - valueLen(l.cfg.owner)
	lease.keys = [2]string{s[:n-len(counterSuffix)], s[:n]}
	lease.value = s[n:]
	a.args = [3]any{&a.ttlMS, &lease.value, "w"}
	args := a.args[:2]
	if waiting {
		args = a.args[:3]
	}
	if l.cfg.replicas > 0 {
		return l.acquireReplicated(ctx, lease, args)
	}
	lease.RequestedAt = time.Now()
	res, err := luascripts.LockAcquire.Run(ctx, l.client, lease.keys[:], args...).Result()
	if err != nil {
		return nil, wrap(ctx, "acquire", name, err)
	}
	if err := acquired(lease, res); err != nil {
		return nil, err
	}
	return lease, nil
}

// acquired reads the acquire script's reply into lease, or into a HeldError.
func acquired(lease *Lease, res any) error {
	switch r := res.(type) {
	case int64:
		if r > 0 {
			lease.Token = r
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
	n, err := luascripts.LockRelease.Run(ctx, l.client, lease.keys[:1], &lease.value).Int()
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
	if lease == nil || lease.value == "" || lease.keys[0] == "" {
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
	keys := l.keys(name)
	res, err := luascripts.LockHolder.Run(ctx, l.client, keys[:]).Slice()
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
	value, _ := res[1].(string)
	return Holder{Held: true, Token: token, Owner: ownerOf(value), TTL: time.Duration(pttl) * time.Millisecond}, nil
}

// idLen is the length of an acquisition's id: 16 random bytes in hex.
const idLen = 32

// valueLen is the length of a lock's value for owner: "<id> <owner>".
func valueLen(owner string) int { return idLen + 1 + len(owner) }

// newID returns a new random id for an acquisition, in hex. The lock's
// value "<id> <owner>" is what the lock holds while this acquisition has
// it, and what Release and Extend compare.
func newID() [idLen]byte {
	var rnd [idLen / 2]byte
	_, _ = rand.Read(rnd[:]) // crypto/rand.Read never fails on supported platforms
	var id [idLen]byte
	hex.Encode(id[:], rnd[:])
	return id
}

// ownerOf returns the owner label in a lock's value, "<id> <owner>" with
// or without a waiter's "*" in front.
func ownerOf(value string) string {
	_, owner, _ := strings.Cut(value, " ")
	return owner
}

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
