package ratelimit

import (
	"errors"

	"github.com/redis-primitives/go/internal/luascripts"
)

// Errors returned for bad input. They are returned before any round trip,
// wrapped with the detail of what was wrong; match them with errors.Is.
var (
	// ErrInvalidLimit: a limit of zero or less, a window shorter than one
	// millisecond or longer than MaxWindow, a burst of zero or less, a
	// limit too large to count exactly (see GCRA, SlidingLog and
	// SlidingCounter), the zero Limit, an empty Policy, or a Policy that
	// holds the same limit twice.
	ErrInvalidLimit = errors.New("ratelimit: invalid limit")
	// ErrInvalidN: n is zero or less, more than a limit could ever admit
	// at once (its capacity), so waiting would never help, or more than
	// one call may charge a sliding log (MaxLogCharge).
	ErrInvalidN = errors.New("ratelimit: invalid n")
	// ErrInvalidKey: the key is empty.
	ErrInvalidKey = errors.New("ratelimit: invalid key")
	// ErrInvalidOption: New was given a nil option or a bad value (a
	// prefix with '{' or '}', a nil clock).
	ErrInvalidOption = errors.New("ratelimit: invalid option")
	// ErrNilClient: New was given a nil client (a typed nil included), or
	// a Limiter not made by New (its zero value) was asked to decide.
	ErrNilClient = errors.New("ratelimit: nil client")
)

// ErrRedisTooOld is matched by the error of a call that a server older than
// 7.0 refused (EVALSHA_RO, script flags): ratelimit needs Redis 7.0 or
// later. It is the same error as lock.ErrRedisTooOld.
var ErrRedisTooOld = luascripts.ErrRedisTooOld

// ErrReplyLost is matched by the error of a call whose connection failed
// after it was sent: the client would send it again, and it is not, since
// it may have been decided. Like a call that timed out, it may have consumed
// quota. It is the same error as lock.ErrReplyLost.
var ErrReplyLost = luascripts.ErrReplyLost
