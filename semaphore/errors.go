package semaphore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// Errors returned by this package. Match them with errors.Is; the errors
// returned wrap them with the semaphore's name and, for network failures,
// the underlying error. When a call's context ends, the error also matches
// context.Canceled or context.DeadlineExceeded.
var (
	// ErrNilClient is returned by New when the client is nil.
	ErrNilClient = errors.New("semaphore: nil client")
	// ErrInvalidOption is returned by New for an option with a bad value,
	// and by WithPermit for a nil function.
	ErrInvalidOption = errors.New("semaphore: invalid option")
	// ErrInvalidName is returned, without a round trip, for an empty name
	// or one that would empty the keys' hash tag.
	ErrInvalidName = errors.New("semaphore: invalid name")
	// ErrInvalidCapacity is returned, without a round trip, for a capacity
	// under 1.
	ErrInvalidCapacity = errors.New("semaphore: invalid capacity")
	// ErrInvalidTTL is returned, without a round trip, for a TTL under one
	// millisecond, or one that leaves WithPermit no time to renew once the
	// safety margin is taken off.
	ErrInvalidTTL = errors.New("semaphore: invalid ttl")
	// ErrInvalidPermit is returned for a nil permit or one not made by
	// Acquire.
	ErrInvalidPermit = errors.New("semaphore: invalid permit")
	// ErrFull is matched by the *FullError that Acquire returns when the
	// semaphore has capacity live permits already. WithPermit returns it
	// without running fn.
	ErrFull = errors.New("semaphore: no permit free")
	// ErrNotHeld is returned by Extend when the permit is no longer live:
	// it expired or was released.
	ErrNotHeld = errors.New("semaphore: permit not held")
	// ErrPermitLost is returned by WithPermit, and is the cause of the
	// context fn receives, when the permit could no longer be proven while
	// fn ran: a renewal found it gone (the error also matches ErrNotHeld),
	// or no renewal succeeded before its local deadline (ErrDeadline).
	ErrPermitLost = errors.New("semaphore: permit lost")
	// ErrDeadline is wrapped in ErrPermitLost when the permit's local
	// deadline passed without a successful renewal (Redis unreachable or
	// frozen, or this process paused).
	ErrDeadline = errors.New("semaphore: local deadline passed without a renewal")
	// ErrRedisTooOld is matched by the error of a call that a server older
	// than 7.0 refused: the scripts need Redis 7.0 or later. It is the same
	// error as lock.ErrRedisTooOld.
	ErrRedisTooOld = luascripts.ErrRedisTooOld
	// ErrReplyLost is matched by the error of a release whose connection
	// failed after it was sent: the client would send it again, and it is
	// not, since it may have run; the permit is released, or expires with
	// its TTL. (Acquire and Extend are safe to run twice, and the client
	// may send them again as any command.) It is the same error as
	// lock.ErrReplyLost.
	ErrReplyLost = luascripts.ErrReplyLost
)

// FullError is the error Acquire returns when no permit is free. It
// describes the semaphore as the refusing script saw it.
type FullError struct {
	Name string
	// Capacity is the capacity the refused call asked for.
	Capacity int
	// Holders is how many live permits there were: at least Capacity, more
	// when holders took permits under a larger capacity than this call's.
	Holders int
	// Expires is how long until the earliest live permit expires, unless
	// it is released or extended first: the longest a waiter must wait for
	// a crashed holder.
	Expires time.Duration
}

func (e *FullError) Error() string {
	return fmt.Sprintf("%s: %q (%d live, capacity %d, the first expires in %v)", ErrFull, e.Name, e.Holders, e.Capacity, e.Expires)
}

// Is makes errors.Is(err, ErrFull) true.
func (e *FullError) Is(target error) bool { return target == ErrFull }

// netErr adds the operation and name to a network error, and the context's
// error when the context ended: a client may report a context deadline as
// an I/O timeout, which errors.Is(err, context.DeadlineExceeded) would
// miss.
func netErr(ctx context.Context, op, name string, err error) error {
	cerr := ctx.Err()
	if cerr == nil || errors.Is(err, cerr) {
		return fmt.Errorf("semaphore: %s %q: %w", op, name, err)
	}
	return fmt.Errorf("semaphore: %s %q: %w (%w)", op, name, err, cerr)
}
