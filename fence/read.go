package fence

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/redis-primitives/go/internal/luascripts"
)

// The reads, run with EVALSHA_RO so they may go to replicas. Each file
// states its KEYS, ARGV and reply.
var (
	//go:embed get.lua
	getSource string
	//go:embed hget.lua
	hgetSource string
	//go:embed highest.lua
	highestSource string

	getScript     = luascripts.NewReadOnly("get.lua", getSource)
	hgetScript    = luascripts.NewReadOnly("hget.lua", hgetSource)
	highestScript = luascripts.NewReadOnly("highest.lua", highestSource)
)

// Get returns the value of the string key, or ErrNotFound. It is a plain
// read: it takes no token and is not ordered with respect to writes still in
// flight.
func (s *Store) Get(ctx context.Context, key string) (string, error) {
	if err := s.checkRead(key); err != nil {
		return "", err
	}
	v, err := getScript.Run(ctx, s.client, []string{key}).Text()
	return v, readErr("get", key, err)
}

// HGet returns field of the hash key, or ErrNotFound.
func (s *Store) HGet(ctx context.Context, key, field string) (string, error) {
	if err := s.checkRead(key); err != nil {
		return "", err
	}
	v, err := hgetScript.Run(ctx, s.client, []string{key}, field).Text()
	return v, readErr("hget", key, err)
}

// Highest returns the highest token accepted for writes to key (the key's
// own mark, or the scope's), or 0 if no write has been accepted. key must be
// one the Store may write.
func (s *Store) Highest(ctx context.Context, key string) (int64, error) {
	if s == nil || s.client == nil {
		return 0, ErrNilClient
	}
	mark, err := s.markFor(key)
	if err != nil {
		return 0, err
	}
	n, err := highestScript.Run(ctx, s.client, []string{mark}).Int64()
	if err != nil {
		return 0, fmt.Errorf("fence: highest for %q: %w", key, err)
	}
	return n, nil
}

func (s *Store) checkRead(key string) error {
	if s == nil || s.client == nil {
		return ErrNilClient
	}
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	return nil
}

func readErr(op, key string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, luascripts.ErrNil):
		return fmt.Errorf("%w: %q", ErrNotFound, key)
	default:
		return fmt.Errorf("fence: %s %q: %w", op, key, err)
	}
}
