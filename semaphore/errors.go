package semaphore

import (
	"errors"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

// errs are the sentinels the lease core makes for semaphore, so that its
// errors are semaphore's.
var errs = leasecore.NewErrors("semaphore", "permit")

// kind is semaphore's Kind for the lease core.
type kind struct{}

func (kind) Errs() *leasecore.Errors { return errs }

// Errors returned by this package. Match them with errors.Is; the errors
// returned wrap them with the semaphore's name and, for network failures,
// the underlying error. When a call's context ends, the error also matches
// context.Canceled or context.DeadlineExceeded.
var (
	// ErrInvalidCapacity is returned, without a round trip, for a capacity
	// under 1.
	ErrInvalidCapacity = errs.InvalidCap
	// ErrFull is matched by the *FullError that Acquire returns when the
	// semaphore has capacity live permits already. WithPermit returns it
	// without running fn.
	ErrFull = errors.New("semaphore: no permit free")
	// ErrNilClient is returned by New when the client is nil, and by the
	// calls of a Issuer not made by New (its zero value).
	ErrNilClient = errs.NilClient
	// ErrInvalidOption is returned by New for an option with a bad value,
	// and by WithPermit for a nil function.
	ErrInvalidOption = errs.InvalidOption
	// ErrInvalidName is returned, without a round trip, for an empty name
	// or one that would empty the keys' hash tag.
	ErrInvalidName = errs.InvalidName
	// ErrInvalidTTL is returned, without a round trip, for a TTL lock
	// refuses (see lock.ErrInvalidTTL), and by Keep and WithPermit for a
	// renew interval under one millisecond or not under the TTL minus the
	// safety margin.
	ErrInvalidTTL = errs.InvalidTTL
	// ErrInvalidPermit is returned for a nil permit or one not made by
	// Acquire.
	ErrInvalidPermit = errs.InvalidLease
	// ErrNotHeld is returned by Extend when the permit is no longer live:
	// it expired or was released.
	ErrNotHeld = errs.NotHeld
	// ErrPermitLost is returned by WithPermit, and is the cause of the
	// context fn receives, when the permit could no longer be proven while
	// fn ran: a renewal found it gone (the error also matches ErrNotHeld),
	// or no renewal succeeded before its local deadline (ErrDeadline).
	ErrPermitLost = errs.Lost
	// ErrDeadline is wrapped in ErrPermitLost when the permit's local
	// deadline passed without a successful renewal.
	ErrDeadline = errs.Deadline
	// ErrRedisTooOld is matched by the error of a call that a server older
	// than 7.0 refused. It is the same error as lock.ErrRedisTooOld.
	ErrRedisTooOld = luascripts.ErrRedisTooOld
	// ErrReplyLost is matched by the error of a release (Release,
	// WithPermit's) whose connection failed after it was sent (see
	// Release). It is the same error as lock.ErrReplyLost.
	ErrReplyLost = luascripts.ErrReplyLost
)
