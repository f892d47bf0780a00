package ratelimit

import (
	"fmt"
	"strconv"
	"time"
)

// Algorithm names how a Limit counts.
type Algorithm string

const (
	// AlgorithmSlidingLog keeps one sorted-set member per admitted request:
	// exact, and O(limit) memory per key.
	AlgorithmSlidingLog Algorithm = "sliding-log"
	// AlgorithmSlidingCounter keeps two weighted bucket counts: O(1) memory
	// per key, approximate (see the package documentation for its error).
	AlgorithmSlidingCounter Algorithm = "sliding-counter"
	// AlgorithmGCRA is a token bucket with a burst, kept as one level and
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
}

// SlidingLog allows n requests in any window, exactly: at no instant have
// more than n been admitted in the preceding window. Memory per key grows
// with n (one sorted-set member per admitted request), so use it for limits
// up to the hundreds or low thousands.
func SlidingLog(n int, window time.Duration) Limit {
	return Limit{alg: AlgorithmSlidingLog, n: n, window: window}
}

// SlidingCounter allows about n requests in any window with O(1) memory per
// key. It can admit more than n in a window when the previous window's
// traffic was bunched at its end; the package documentation gives the
// bound.
func SlidingCounter(n int, window time.Duration) Limit {
	return Limit{alg: AlgorithmSlidingCounter, n: n, window: window}
}

// GCRA allows a sustained rate of n requests per period and bursts of up to
// burst requests at once (the generic cell rate algorithm, a token bucket
// that holds burst tokens and refills one every per/n).
func GCRA(n int, per time.Duration, burst int) Limit {
	return Limit{alg: AlgorithmGCRA, n: n, window: per, burst: burst}
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

// validate checks l without touching the network.
func (l Limit) validate() error {
	switch l.alg {
	case AlgorithmSlidingLog, AlgorithmSlidingCounter, AlgorithmGCRA:
	default:
		return fmt.Errorf("%w: no algorithm (build limits with SlidingLog, SlidingCounter or GCRA)", ErrInvalidLimit)
	}
	if l.n <= 0 {
		return fmt.Errorf("%w: %v: n must be positive", ErrInvalidLimit, l)
	}
	if l.window < time.Millisecond {
		return fmt.Errorf("%w: %v: window must be at least 1ms", ErrInvalidLimit, l)
	}
	if l.alg == AlgorithmGCRA && l.burst <= 0 {
		return fmt.Errorf("%w: %v: burst must be positive", ErrInvalidLimit, l)
	}
	return nil
}

// id names l's state inside a key. It holds every parameter, so a limit
// whose parameters change starts afresh instead of misreading old state.
func (l Limit) id() string {
	w := strconv.FormatInt(l.window.Microseconds(), 10)
	switch l.alg {
	case AlgorithmSlidingLog:
		return "log:" + strconv.Itoa(l.n) + ":" + w
	case AlgorithmSlidingCounter:
		return "counter:" + strconv.Itoa(l.n) + ":" + w
	default:
		return "gcra:" + strconv.Itoa(l.n) + ":" + w + ":" + strconv.Itoa(l.burst)
	}
}

// script returns the four script arguments for l.
func (l Limit) script() []any {
	w := l.window.Microseconds()
	switch l.alg {
	case AlgorithmSlidingLog:
		return []any{"log", l.n, w, 0}
	case AlgorithmSlidingCounter:
		return []any{"counter", l.n, w, 0}
	default:
		return []any{"gcra", l.burst, w, l.n}
	}
}
