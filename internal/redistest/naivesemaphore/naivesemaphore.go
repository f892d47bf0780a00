// Package naivesemaphore is the counting semaphore everyone writes first,
// kept BROKEN ON PURPOSE so that tests and benchmarks can show what goes
// wrong. Do not use it.
//
// Acquire increments a counter and gives the place back at once if the
// count went past the capacity; Release decrements it. A holder that
// crashes between the two never decrements: its permit is gone for good,
// and after capacity such crashes nothing runs again until someone resets
// the counter by hand. It issues no fencing token either. Package
// semaphore is the fixed version: permits are leases that expire by the
// server's clock, and each carries a token.
package naivesemaphore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Client is the part of a go-redis client the naive semaphore uses.
type Client interface {
	Incr(ctx context.Context, key string) *redis.IntCmd
	Decr(ctx context.Context, key string) *redis.IntCmd
}

// Semaphore is the broken semaphore. Its counters are prefix + name.
type Semaphore struct {
	client Client
	prefix string
}

// New returns a naive semaphore with counters prefix + name.
func New(client Client, prefix string) *Semaphore { return &Semaphore{client: client, prefix: prefix} }

// Acquire takes a place if fewer than capacity are taken, and reports
// whether it did.
func (s *Semaphore) Acquire(ctx context.Context, name string, capacity int) (bool, error) {
	n, err := s.client.Incr(ctx, s.prefix+name).Result()
	if err != nil {
		return false, fmt.Errorf("naivesemaphore: acquire %q: %w", name, err)
	}
	if n <= int64(capacity) {
		return true, nil
	}
	if err := s.client.Decr(ctx, s.prefix+name).Err(); err != nil {
		return false, fmt.Errorf("naivesemaphore: acquire %q: give back: %w", name, err)
	}
	return false, nil
}

// Release gives a place back. Nothing gives back the place of a holder
// that never calls it: that is the bug.
func (s *Semaphore) Release(ctx context.Context, name string) error {
	if err := s.client.Decr(ctx, s.prefix+name).Err(); err != nil {
		return fmt.Errorf("naivesemaphore: release %q: %w", name, err)
	}
	return nil
}
