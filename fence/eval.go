package fence

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// frame is eval.lua: the fence's comparison, with a marker line where the
// write goes.
//
//go:embed eval.lua
var frame string

// frameMarker is the line of eval.lua that a write replaces.
const frameMarker = "--[[fence: the write]]"

// framed returns the script that runs body, a Lua write, under the fence:
// eval.lua with body in place of its marker. body reads its keys and
// arguments from KEYS[2..] and ARGV[2..].
func framed(name, body string) *luascripts.Script {
	return luascripts.New(name, strings.Replace(frame, frameMarker, body, 1))
}

// Eval runs script, a caller's Lua write, under the fence: in one atomic
// call, the token is compared with the mark of keys[0] (or of the scope),
// and script runs only if the token passes. It returns what script returns
// (an integer as int64, a string as string, a table as []any of these,
// false or nil as nil), or a *StaleError when refused, in which case
// script did not run. args are strings, []byte or numbers, as Set's value.
//
// Reserved slots: inside script, KEYS[1] is the high-water mark and ARGV[1]
// the token. The caller's keys are KEYS[2], KEYS[3], … in the order of
// keys, and its arguments ARGV[2], ARGV[3], … in the order of args. Write
// only to keys passed in keys, and never to KEYS[1].
//
// script is the body of a Lua function: it may return a value. It may not
// start with '#', or Eval fails with ErrInvalidScript before any round
// trip: neither a #! flags line, which Redis reads only at the start of a
// whole script, nor a '#' comment (Lua's start with --) compiles inside
// that function. keys must not be empty, and every key must share the hash
// slot of keys[0] (the same hash tag, in a scoped Store the scope's tag),
// or Eval fails with ErrCrossSlot before any round trip.
//
// If script raises an error after the check, the mark has already been
// advanced and Redis keeps whatever script wrote before the error: Redis
// scripts are atomic, not transactional.
func (s *Store) Eval(ctx context.Context, token int64, script string, keys []string, args ...any) (any, error) {
	switch body := strings.TrimSpace(script); {
	case body == "":
		return nil, fmt.Errorf("%w: empty script", ErrInvalidScript)
	case body[0] == '#':
		// No statement starts with '#' in Lua (the length operator): the
		// server would refuse it, in words that read as a Redis before 7.0.
		return nil, fmt.Errorf("%w: starts with '#': neither a flags line nor a '#' comment compiles inside fence's function (comment with --)", ErrInvalidScript)
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
	for i, a := range args {
		if err := checkValue(fmt.Sprintf("argument %d", i), a); err != nil {
			return nil, err
		}
	}
	all := append(append(make([]string, 0, len(keys)+1), mark), keys...)
	argv := append(append(make([]any, 0, len(args)+1), token), args...)
	return s.run(ctx, opEval, framed("eval.lua+body", script), keys[0], token, all, argv)
}

// run runs a framed write and decodes its reply. keys and argv are the
// script's whole KEYS and ARGV, mark and token first.
func (s *Store) run(ctx context.Context, op string, script *luascripts.Script, key string, token int64, keys []string, argv []any) (any, error) {
	var start time.Time
	if s.on() {
		start = time.Now()
	}
	// Refused on a server that may evict marks (ADR 0029): a lost mark
	// would accept the very write the fence exists to refuse.
	err := s.policy.Check(ctx, s.client)
	var res []any
	if err == nil {
		res, err = s.runWrite(ctx, script, keys, argv).Slice()
	}
	var out any
	if err != nil {
		err = fmt.Errorf("fence: %s %q: %w", op, key, err)
	} else {
		out, err = verdict(key, token, res)
	}
	if s.on() {
		e := Event{Op: op, Outcome: outcomeAccepted, Key: key, Token: token, Latency: time.Since(start), Err: err}
		if se, ok := err.(*StaleError); ok {
			e.Outcome, e.Highest = outcomeStale, se.Highest
		} else if err != nil {
			e.Outcome = outcomeError
		}
		s.observe(ctx, e)
	}
	return out, err
}

// verdict reads a framed script's reply: {1, token[, result]} when the
// write ran, {0, highest} when it was refused.
func verdict(key string, token int64, res []any) (any, error) {
	if len(res) < 2 {
		return nil, fmt.Errorf("fence: %q: unexpected reply %v", key, res)
	}
	if ok, _ := res[0].(int64); ok != 1 {
		highest, _ := res[1].(int64)
		return nil, &StaleError{Key: key, Token: token, Highest: highest}
	}
	if len(res) > 2 {
		return res[2], nil
	}
	return nil, nil
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
