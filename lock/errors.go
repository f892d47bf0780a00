package lock

import (
	"errors"
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

// errs are the sentinels the lease core makes for lock, so that its errors
// are lock's.
var errs = leasecore.NewErrors("lock", "lease")

// kind is lock's Kind for the lease core: what tells its leases apart.
type kind struct{}

func (kind) Errs() *leasecore.Errors { return errs }

// Errors returned by this package. Match them with errors.Is; the errors
// returned wrap them with the lock name and, for network failures, the
// underlying error. When a call's context ends, the error also matches
// context.Canceled or context.DeadlineExceeded.
var (
	// ErrNilClient is returned by New when the client is nil, and by the
	// calls of a Locker not made by New (its zero value).
	ErrNilClient = errs.NilClient
	// ErrInvalidOption is returned by New for an option with a bad value.
	ErrInvalidOption = errs.InvalidOption
	// ErrInvalidName is returned, without a round trip, for an empty name
	// or one that would empty the keys' hash tag.
	ErrInvalidName = errs.InvalidName
	// ErrInvalidTTL is returned, without a round trip, for a TTL under one
	// millisecond (Redis expires keys with millisecond precision), or one
	// that leaves no time once the safety margin is taken off (with the
	// default margin, TTL/100 + 2ms, any TTL up to 2ms): by Acquire,
	// AcquireWait, Extend and WithLock. Keep and WithLock also return it
	// for a renew interval under one millisecond or not under the TTL minus
	// the margin.
	ErrInvalidTTL = errs.InvalidTTL
	// ErrInvalidLease is returned for a nil lease or one not made by Acquire.
	ErrInvalidLease = errs.InvalidLease
	// ErrHeld is matched by the *HeldError that Acquire returns when another
	// acquisition holds the name. WithLock returns it without running fn.
	ErrHeld = errors.New("lock: held by another owner")
	// ErrNotHeld is returned by Extend when the lease is no longer held: it
	// expired, was released, or the lock now belongs to someone else.
	ErrNotHeld = errs.NotHeld
	// ErrLeaseLost is returned by WithLock, and is the cause of a Keeper's
	// context, when the lease could no longer be proven while fn ran: a
	// renewal found the lock gone (the error also matches ErrNotHeld), or no
	// renewal succeeded before the lease's local deadline (ErrDeadline).
	ErrLeaseLost = errs.Lost
	// ErrDeadline is wrapped in ErrLeaseLost when the local deadline passed
	// without a successful renewal, for example because Redis was
	// unreachable or frozen. Acquire returns it, with no lease, when its
	// reply came after the lease's deadline.
	ErrDeadline = errs.Deadline
	// ErrNotReplicated is returned by Acquire under WithReplicas(…,
	// failClosed=true) when fewer replicas than required acknowledged the
	// lock in time. Acquire has tried to release the lock; if that failed
	// too, the error says so and the lock expires with its TTL. Extend
	// returns it when fewer acknowledged the extension: the lease keeps its
	// previous deadline.
	ErrNotReplicated = errors.New("lock: not acknowledged by enough replicas")
	// ErrRedisTooOld is matched by the error of a call that a server older
	// than 7.0 refused (EVALSHA_RO, script flags, and Acquire's SET with
	// both NX and GET, which 6.2 answers "ERR syntax error"): lock needs
	// Redis 7.0 or later. Preflight reports the server's version before any
	// call. It is the same error as fence.ErrRedisTooOld and
	// ratelimit.ErrRedisTooOld.
	ErrRedisTooOld = luascripts.ErrRedisTooOld
	// ErrEvictingPolicy is matched by the error of an Acquire of a Locker
	// WithCounterTokens on a server whose maxmemory-policy is allkeys-*:
	// under memory pressure it may evict the counter, and the next token
	// is then one already handed out, which every fence accepts (ADR 0029).
	// The policy is read (INFO memory) at the first such Acquire and again
	// at most every 30 seconds; a server that does not tell it is not
	// refused. The default tokens do not rest on the counter and are never
	// refused. It is the same error as fence.ErrEvictingPolicy.
	ErrEvictingPolicy = luascripts.ErrEvictingPolicy
	// ErrReplyLost is matched by the error of a release (Release,
	// ForceRelease, WithLock's) whose connection failed after it was sent:
	// the client does not send it again, since it may have run (a second
	// run would report false after releasing); the lock is released or
	// expires with its TTL. Acquire and Extend are safe to run twice, and
	// the client may send them again as any command. It is the same error
	// as fence.ErrReplyLost and ratelimit.ErrReplyLost.
	ErrReplyLost = luascripts.ErrReplyLost
)

// HeldError is the error Acquire returns when the name is held. It carries
// the holder as seen in the same atomic step, so a caller that wants to wait
// knows for how long at most: TTL is the holder's remaining time to live
// (negative if the key has no expiry, which this package never sets).
type HeldError struct {
	Name  string
	Token int64
	Owner string
	TTL   time.Duration
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s: %q (token %d, owner %q, expires in %v)", ErrHeld, e.Name, e.Token, e.Owner, e.TTL)
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }
