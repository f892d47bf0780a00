// Package naivelock is the lock everyone writes first, kept BROKEN ON PURPOSE so
// that tests and the demo can show what goes wrong. Do not use it.
//
// It takes a lock with SET NX PX and releases it with a bare DEL. When the
// lease expires while the holder still works, a second worker acquires, and
// the first worker's DEL then deletes the second worker's lock, letting a
// third walk in. It issues no fencing token, so the resource cannot refuse
// the stale worker either. Package lock is the fixed version.
package naivelock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Client is the part of a go-redis client the naive lock uses.
type Client interface {
	SetNX(ctx context.Context, key string, value any, expiration time.Duration) *redis.BoolCmd
	Del(ctx context.Context, keys ...string) *redis.IntCmd
}

// Lock is the broken lock. Its keys are prefix + name.
type Lock struct {
	client Client
	prefix string
}

// New returns a naive lock with keys prefix + name.
func New(client Client, prefix string) *Lock { return &Lock{client: client, prefix: prefix} }

// Acquire sets the key if it is absent, with a TTL. It reports whether it did.
func (l *Lock) Acquire(ctx context.Context, name string, ttl time.Duration) (bool, error) {
	ok, err := l.client.SetNX(ctx, l.prefix+name, "1", ttl).Result()
	if err != nil {
		return false, fmt.Errorf("naivelock: acquire %q: %w", name, err)
	}
	return ok, nil
}

// Release deletes the key, whoever holds it now. That is the bug.
func (l *Lock) Release(ctx context.Context, name string) error {
	if err := l.client.Del(ctx, l.prefix+name).Err(); err != nil {
		return fmt.Errorf("naivelock: release %q: %w", name, err)
	}
	return nil
}
