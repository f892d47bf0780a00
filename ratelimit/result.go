package ratelimit

import "time"

// Result is one decision.
type Result struct {
	// Allowed reports whether the request was admitted (for Peek: would be).
	Allowed bool
	// Limit is the limit that bound the decision: when rejected, the one
	// that must be waited for longest; when allowed, the one with the
	// fewest requests remaining.
	Limit Limit
	// Granted is how many requests were consumed: n for AllowN, 1 to n for
	// Take, 0 when rejected and always 0 for Peek.
	Granted int
	// Remaining is how many more requests Limit would admit right now.
	Remaining int
	// RetryAfter is zero when allowed; otherwise how long until the same
	// request would be admitted if nothing else arrives. It is rounded up
	// to the millisecond, never down: a client that waits exactly this long
	// is admitted.
	RetryAfter time.Duration
	// ResetAfter is how long until Limit is back to its full allowance if
	// nothing else arrives, rounded up to the millisecond.
	ResetAfter time.Duration
	// Each holds the state of every limit of a Policy, in order; their Each
	// is nil. It is nil for a single Limit, whose state is this Result
	// itself.
	Each []Result
}
