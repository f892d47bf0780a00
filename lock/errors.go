package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// Errors returned by this package. Match them with errors.Is; the errors
// returned wrap them with the lock name and, for network failures, the
// underlying error. When a call's context ends, the error also matches
// context.Canceled or context.DeadlineExceeded.
var (
	// ErrNilClient is returned by New when the client is nil.
	ErrNilClient = errors.New("lock: nil client")
	// ErrInvalidOption is returned by New for an option with a bad value.
	ErrInvalidOption = errors.New("lock: invalid option")
	// ErrInvalidName is returned, without a round trip, for an empty name.
	ErrInvalidName = errors.New("lock: invalid name")
	// ErrInvalidTTL is returned, without a round trip, for a TTL under one
	// millisecond (Redis expires keys with millisecond precision), or one
	// that leaves no time once the safety margin is taken off (with the
	// default margin, TTL/100 + 2ms, any TTL up to 2ms): by Acquire,
	// AcquireWait, Extend and WithLock. Keep and WithLock also return it
	// for a renew interval that is not under the TTL minus the margin.
	ErrInvalidTTL = errors.New("lock: invalid ttl")
	// ErrInvalidLease is returned for a nil lease or one not made by Acquire.
	ErrInvalidLease = errors.New("lock: invalid lease")
	// ErrHeld is matched by the *HeldError that Acquire returns when another
	// acquisition holds the name. WithLock returns it without running fn.
	ErrHeld = errors.New("lock: held by another owner")
	// ErrNotHeld is returned by Extend when the lease is no longer held: it
	// expired, was released, or the lock now belongs to someone else.
	ErrNotHeld = errors.New("lock: lease not held")
	// ErrLeaseLost is returned by WithLock, and is the cause of a Keeper's
	// context, when the lease could no longer be proven while fn ran: a
	// renewal found the lock gone (the error also matches ErrNotHeld), or no
	// renewal succeeded before the lease's local deadline (ErrDeadline).
	ErrLeaseLost = errors.New("lock: lease lost")
	// ErrDeadline is wrapped in ErrLeaseLost when the local deadline passed
	// without a successful renewal, for example because Redis was
	// unreachable or frozen. Acquire returns it, with no lease, when its
	// reply came after the lease's deadline.
	ErrDeadline = errors.New("lock: local deadline passed without a renewal")
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
	// ErrReplyLost is matched by the error of a call whose connection
	// failed after it was sent: the client does not send it again, since
	// it may have run (an acquire is then released in the
	// background by its own id, as after a timeout; a release or an extend
	// may or may not have happened). It is the same error as
	// fence.ErrReplyLost and ratelimit.ErrReplyLost.
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

// wrap adds the operation and name to a network error, and the context's
// error when the context ended: a client may report a context deadline as
// an I/O timeout, which errors.Is(err, context.DeadlineExceeded) would
// miss.
func wrap(ctx context.Context, op, name string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("lock: %s %q: %w (%w)", op, name, err, cerr)
	}
	return fmt.Errorf("lock: %s %q: %w", op, name, err)
}
