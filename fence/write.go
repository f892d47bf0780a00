package fence

import (
	"context"
	"fmt"

	"github.com/redis-primitives/go/internal/luascripts"
)

// The two writes of this package: eval.lua with a fixed body.
//
//	set:  KEYS[1] mark, KEYS[2] key;  ARGV[1] token, ARGV[2] value
//	hset: KEYS[1] mark, KEYS[2] hash; ARGV[1] token, ARGV[2] field, ARGV[3] value
//
// Both reply as eval.lua does.
var (
	setScript  = framed("set", "redis.call('SET', KEYS[2], ARGV[2])")
	hsetScript = framed("hset", "redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])")
)

// Set writes value to key if token is at least the highest token accepted
// for key's mark, and records token as the new highest, in one atomic
// script. Equal tokens are accepted, so the current holder may write any
// number of times. A refused write returns a *StaleError (matching
// ErrStale) and writes nothing.
//
// value is a string, a []byte or a number (an integer or a float of any
// size), which every client sends alike; anything else, nil included, is
// ErrInvalidValue. Bad input fails without a round trip.
func (s *Store) Set(ctx context.Context, token int64, key string, value any) error {
	mark, err := s.check(token, key)
	if err != nil {
		return err
	}
	if err := checkValue("value", value); err != nil {
		return err
	}
	_, err = s.run(ctx, opSet, setScript, key, token, []string{mark, key}, []any{token, value})
	return err
}

// HSet sets field of the hash key to value under the fence, like Set. The
// mark guards the whole hash, not the field.
func (s *Store) HSet(ctx context.Context, token int64, key, field string, value any) error {
	mark, err := s.check(token, key)
	if err != nil {
		return err
	}
	if err := checkValue("value", value); err != nil {
		return err
	}
	_, err = s.run(ctx, opHSet, hsetScript, key, token, []string{mark, key}, []any{token, field, value})
	return err
}

// checkValue refuses a value no client writes alike (luascripts.ArgOK).
func checkValue(what string, v any) error {
	if !luascripts.ArgOK(v) {
		return fmt.Errorf("%w: %s is a %T; want a string, a []byte or a number", ErrInvalidValue, what, v)
	}
	return nil
}
