package fence

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis-primitives/go/luascripts"
)

// Set writes value to key if token is at least the highest token accepted
// for key's mark, and records token as the new highest, in one atomic
// script. Equal tokens are accepted, so the current holder may write any
// number of times. A refused write returns a *StaleError (matching
// ErrStale) and writes nothing.
//
// value is anything go-redis accepts as an argument (string, []byte,
// numbers). Bad input fails without a round trip.
func (s *Store) Set(ctx context.Context, token int64, key string, value any) error {
	mark, err := s.check(token, key)
	if err != nil {
		return err
	}
	res, err := luascripts.FenceSet.Run(ctx, s.client, []string{mark, key}, token, value).Slice()
	if err != nil {
		return fmt.Errorf("fence: set %q: %w", key, err)
	}
	_, err = verdict(key, token, res)
	return err
}

// HSet sets field of the hash key to value under the fence, like Set. The
// mark guards the whole hash, not the field.
func (s *Store) HSet(ctx context.Context, token int64, key, field string, value any) error {
	mark, err := s.check(token, key)
	if err != nil {
		return err
	}
	res, err := luascripts.FenceHSet.Run(ctx, s.client, []string{mark, key}, token, field, value).Slice()
	if err != nil {
		return fmt.Errorf("fence: hset %q: %w", key, err)
	}
	_, err = verdict(key, token, res)
	return err
}

// Eval runs script, a caller's Lua write, under the fence: in one atomic
// call, the token is compared with the mark of keys[0] (or of the scope),
// and script runs only if the token passes. It returns what script returns
// (converted as go-redis converts a script's reply), or a *StaleError when
// refused, in which case script did not run.
//
// Reserved slots: inside script, KEYS[1] is the high-water mark and ARGV[1]
// the token. The caller's keys are KEYS[2], KEYS[3], … in the order of
// keys, and its arguments ARGV[2], ARGV[3], … in the order of args. Write
// only to keys passed in keys, and never to KEYS[1].
//
// script is the body of a Lua function: it may return a value, and it may
// not start with a #! flags line. keys must not be empty, and every key
// must share the hash slot of keys[0] (the same hash tag, in a scoped Store
// the scope's tag), or Eval fails with ErrCrossSlot before any round trip.
//
// If script raises an error after the check, the mark has already been
// advanced and Redis keeps whatever script wrote before the error: Redis
// scripts are atomic, not transactional.
func (s *Store) Eval(ctx context.Context, token int64, script string, keys []string, args ...any) (any, error) {
	if strings.TrimSpace(script) == "" {
		return nil, fmt.Errorf("%w: empty script", ErrInvalidScript)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: Eval needs at least one key", ErrInvalidKey)
	}
	mark, err := s.check(token, keys[0])
	if err != nil {
		return nil, err
	}
	for _, k := range keys[1:] {
		if err := checkKey(k); err != nil {
			return nil, err
		}
		if slotOf(k) != slotOf(mark) {
			return nil, fmt.Errorf("%w: %q is not in the slot of %q; give it the same hash tag", ErrCrossSlot, k, mark)
		}
	}
	all := make([]string, 0, len(keys)+1)
	all = append(append(all, mark), keys...)
	argv := make([]any, 0, len(args)+1)
	argv = append(append(argv, token), args...)
	res, err := luascripts.FenceEval(script).Run(ctx, s.client, all, argv...).Slice()
	if err != nil {
		return nil, fmt.Errorf("fence: eval on %q: %w", keys[0], err)
	}
	return verdict(keys[0], token, res)
}

// check validates a write's input, without a round trip, and returns the
// mark that guards key.
func (s *Store) check(token int64, key string) (string, error) {
	if s == nil || s.client == nil {
		return "", ErrNilClient
	}
	if err := checkToken(token); err != nil {
		return "", err
	}
	return s.markFor(key)
}

// verdict reads a fenced script's reply: {1, token[, result]} when the
// write ran, {0, highest} when it was refused.
func verdict(key string, token int64, res []any) (any, error) {
	if len(res) < 2 {
		return nil, fmt.Errorf("fence: %q: unexpected reply %v", key, res)
	}
	ok, _ := res[0].(int64)
	if ok != 1 {
		highest, _ := res[1].(int64)
		return nil, &StaleError{Key: key, Token: token, Highest: highest}
	}
	if len(res) > 2 {
		return res[2], nil
	}
	return nil, nil
}
