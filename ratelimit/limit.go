package ratelimit

import (
	"fmt"
	"time"
)

// maxExact is 2^53: integers below it are exact in a Lua number.
const maxExact = 1 << 53

// MaxWindow is the longest window (for GCRA, period) a limit may have:
// ten years of 365 days. A longer one is ErrInvalidLimit.
const MaxWindow = 10 * 365 * 24 * time.Hour

// Algorithm names how a Limit counts.
type Algorithm string

const (
	// AlgorithmSlidingLog keeps one sorted-set member per admitted request:
	// exact, and O(limit) memory per key.
	AlgorithmSlidingLog Algorithm = "sliding-log"
	// AlgorithmSlidingCounter keeps two bucket counts, the previous one
	// weighted: O(1) memory per key, approximate (see the package
	// documentation for its error).
	AlgorithmSlidingCounter Algorithm = "sliding-counter"
	// AlgorithmGCRA is a token bucket with a burst, kept as one backlog and
	// one timestamp: O(1) memory per key.
	AlgorithmGCRA Algorithm = "gcra"
)

// A Limit is how many requests a key may make and how they are counted.
// Build one with SlidingLog, SlidingCounter or GCRA; the zero Limit is
// invalid. Limits are small values, comparable with ==.
type Limit struct {
	alg    Algorithm
	n      int
	window time.Duration
	burst  int
	name   string
	// id names the limit's state after the user's key (see limitID), set
	// by the constructors: built per call, it costs 4 allocs/op more.
	id string
}

// SlidingLog allows n requests in any window, exactly: at no instant have
// more than n been admitted in the preceding window. Memory per key grows
// with n (one sorted-set member per admitted request), so use it for limits
// up to the hundreds or low thousands. n × window in microseconds must be
// below 2^53, and one call may charge it at most MaxLogCharge requests.
func SlidingLog(n int, window time.Duration) Limit {
	return Limit{alg: AlgorithmSlidingLog, n: n, window: window}.withID()
}

// SlidingCounter allows about n requests in any window with O(1) memory per
// key. It can admit more than n in a window when the previous window's
// traffic was bunched at its end; the package documentation gives the
// bound. n must be below 2^52 (two windows' counts are counted exactly).
func SlidingCounter(n int, window time.Duration) Limit {
	return Limit{alg: AlgorithmSlidingCounter, n: n, window: window}.withID()
}

// GCRA allows a sustained rate of n requests per period and bursts of up to
// burst requests at once (the generic cell rate algorithm, a token bucket
// that holds burst tokens and refills one every per/n). It counts in exact
// integers: burst × per in microseconds ÷ gcd(per in microseconds, n) must
// be below 2^53 (a burst of a million over a day at n = 1 is not), or calls
// return ErrInvalidLimit.
func GCRA(n int, per time.Duration, burst int) Limit {
	return Limit{alg: AlgorithmGCRA, n: n, window: per, burst: burst}.withID()
}

// Named returns a copy of l with a name, used as the policy identifier in
// HTTP headers. The name does not take part in the Redis key: renaming a
// limit keeps its state.
func (l Limit) Named(name string) Limit {
	l.name = name
	return l
}

// Name returns the name given with Named, or a name derived from the
// parameters such as "100-per-1m0s".
func (l Limit) Name() string {
	if l.name != "" {
		return l.name
	}
	if l.alg == AlgorithmGCRA {
		return fmt.Sprintf("%d-per-%v-burst-%d", l.n, l.window, l.burst)
	}
	return fmt.Sprintf("%d-per-%v", l.n, l.window)
}

// Algorithm returns how l counts.
func (l Limit) Algorithm() Algorithm { return l.alg }

// N returns the number of requests per window (for GCRA, per period).
func (l Limit) N() int { return l.n }

// Window returns the window (for GCRA, the period of the rate).
func (l Limit) Window() time.Duration { return l.window }

// Burst returns the most requests l admits at once: the burst for GCRA, N
// for the others. AllowN with a larger n can never succeed.
func (l Limit) Burst() int {
	if l.alg == AlgorithmGCRA {
		return l.burst
	}
	return l.n
}

// String describes l, for logs.
func (l Limit) String() string {
	if l.alg == AlgorithmGCRA {
		return fmt.Sprintf("gcra %d/%v burst %d", l.n, l.window, l.burst)
	}
	return fmt.Sprintf("%s %d/%v", l.alg, l.n, l.window)
}

// withID sets l's id from its parameters.
func (l Limit) withID() Limit {
	l.id = limitID(l.alg, l.n, l.window, l.burst)
	return l
}

// MaxLogCharge is the most requests one call may charge to a sliding log
// (AllowN, Take, WaitN, Reserve, Commit): the script writes one member per
// request, and Redis runs nothing else meanwhile. An AllowN of 10,000 took
// 13 ms here; of a million, it held every client for 1.8 s, and a script
// that has written cannot be stopped by SCRIPT KILL.
const MaxLogCharge = 10_000

// charges checks that one call may charge n requests to l.
func (l Limit) charges(n int) error {
	if l.alg == AlgorithmSlidingLog && n > MaxLogCharge {
		return fmt.Errorf("%w: %d is more than one call may charge to %v (%d: one member each, written while Redis runs nothing else)", ErrInvalidN, n, l, MaxLogCharge)
	}
	return nil
}
