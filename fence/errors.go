package fence

import (
	"errors"
	"fmt"

	"github.com/redis-primitives/go/internal/luascripts"
)

// Errors returned by this package. Match them with errors.Is: the errors
// returned wrap them with the key and, for network failures, the underlying
// error. When a call's context ends, the error also matches
// context.Canceled or context.DeadlineExceeded.
var (
	// ErrNilClient is returned by New for a nil client, and by the writes of
	// a nil Store or a zero Fencer.
	ErrNilClient = errors.New("fence: nil client")
	// ErrInvalidOption is returned by New for an option with a bad value.
	ErrInvalidOption = errors.New("fence: invalid option")
	// ErrInvalidToken is returned, without a round trip, for a token that
	// is not in 1..2^53 (Lua compares tokens as doubles, exact up to 2^53).
	ErrInvalidToken = errors.New("fence: invalid token")
	// ErrInvalidKey is returned, without a round trip, for an empty key, an
	// Eval with no key, or a key ending in the suffix reserved for marks.
	ErrInvalidKey = errors.New("fence: invalid key")
	// ErrCrossSlot is returned, without a round trip, for a key that cannot
	// share the hash slot of the high-water mark guarding the write: in a
	// scoped Store, a key without the scope's hash tag (build keys with
	// Store.Key); in Eval, a key in another slot than the first one.
	ErrCrossSlot = errors.New("fence: key outside the high-water mark's hash slot")
	// ErrInvalidValue is returned, without a round trip, for a value (or an
	// Eval argument) that is not a string, a []byte or a number: nil, a
	// bool or a struct, which each Redis client writes its own way (go-redis
	// stores nil as "").
	ErrInvalidValue = errors.New("fence: invalid value")
	// ErrInvalidScript is returned, without a round trip, for an empty Eval
	// body, or one whose first non-blank character is '#'.
	ErrInvalidScript = errors.New("fence: invalid script")
	// ErrStale is matched by the *StaleError a write returns when its token
	// is lower than the highest the resource has accepted. Nothing was
	// written; the caller has been superseded and should stop.
	ErrStale = errors.New("fence: token lower than the highest accepted")
	// ErrNotFound is returned by Get and HGet when the key or field does not
	// exist.
	ErrNotFound = errors.New("fence: not found")
	// ErrRedisTooOld is matched by the error of a call that a server older
	// than 7.0 refused (EVALSHA_RO, script flags): fence needs Redis 7.0 or
	// later. It is the same error as lock.ErrRedisTooOld.
	ErrRedisTooOld = luascripts.ErrRedisTooOld
	// ErrEvictingPolicy is matched by the error of a write refused because
	// the server's maxmemory-policy is allkeys-*: under memory pressure it
	// may evict a high-water mark (marks have no TTL), and a key whose mark
	// was evicted accepts a stale write. The policy is read (INFO memory) at
	// the Store's first write and again at most every 30 seconds; a server
	// that does not tell it is not refused (Preflight reports it). Use
	// noeviction, or a volatile-* policy, which evicts only keys with a TTL.
	ErrEvictingPolicy = luascripts.ErrEvictingPolicy
	// ErrReplyLost is matched by the error of a write whose connection
	// failed after it was sent: the client would send it again, and it is
	// not, since it may have run. The write may or may not have landed, as
	// with one that timed out: read the key (or Highest) again. It is the
	// same error as lock.ErrReplyLost.
	ErrReplyLost = luascripts.ErrReplyLost
)

// StaleError is the error a fenced write returns when it was refused. It
// carries the token the write carried and the highest token the resource had
// already accepted, read in the same atomic step as the refusal.
type StaleError struct {
	Key     string // the key the write was for
	Token   int64  // the token the write carried
	Highest int64  // the highest token accepted before it; always > Token
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("%s: %q: token %d, highest accepted %d", ErrStale, e.Key, e.Token, e.Highest)
}

// Is makes errors.Is(err, ErrStale) true.
func (e *StaleError) Is(target error) bool { return target == ErrStale }
