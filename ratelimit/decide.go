package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Allow reports whether one request on key is admitted by r (a Limit or a
// Policy), and consumes it if so.
func (l *Limiter) Allow(ctx context.Context, key string, r Rule) (Result, error) {
	return l.decide(ctx, modeAllow, key, r, 1)
}

// AllowN admits n requests at once or none: a rejected AllowN consumes
// nothing. n larger than any limit's Burst is an error, since it could never
// succeed.
func (l *Limiter) AllowN(ctx context.Context, key string, r Rule, n int) (Result, error) {
	return l.decide(ctx, modeAllow, key, r, n)
}

// Take consumes as many of n requests as are available now, at least one,
// and reports how many in Result.Granted. When none is available it is
// rejected and RetryAfter says when one will be. As with AllowN, n more than
// a limit can ever admit at once (its Burst) is ErrInvalidN.
func (l *Limiter) Take(ctx context.Context, key string, r Rule, n int) (Result, error) {
	return l.decide(ctx, modeTake, key, r, n)
}

// Peek reports whether one request on key would be admitted now, and the
// remaining allowance, without consuming anything. It runs a read-only
// script (EVALSHA_RO), so it also works against a replica.
func (l *Limiter) Peek(ctx context.Context, key string, r Rule) (Result, error) {
	return l.decide(ctx, modePeek, key, r, 1)
}

// A mode is what a call does: the scripts' ARGV[2], and Reset.
type mode string

const (
	modeAllow mode = "allow"
	modeTake  mode = "take"
	modePeek  mode = "peek"
	modeReset mode = "reset" // reset.lua, which reads no mode
)

// decide is the one path of every call: Allow, AllowN, Take, Peek, Wait
// and WaitN (through AllowN) and Reset. It checks the input; answers from
// the deny cache when the cache holds the answer; otherwise runs the
// rule's script, directly or batched, and decodes its reply; caches a
// rejection; and reports the decision to the hook and the logger.
func (l *Limiter) decide(ctx context.Context, m mode, key string, r Rule, n int) (Result, error) {
	var one [1]Limit // a Limit's limits, without an allocation
	lims, err := check(key, r, n, one[:0])
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	now, pinned := start, ""
	if l.cfg.pinned != nil {
		now = l.cfg.pinned()
		pinned = itoa(now.UnixMicro())
	}

	// A rejection of one request answers every call that needs one (Allow,
	// AllowN of 1, Take); it says nothing of more, or of a Peek.
	cached := l.deny != nil && (m == modeAllow && n == 1 || m == modeTake)
	var rule string
	if cached {
		rule = ruleName(r)
		if rep, ok := l.deny.get(key, rule, now); ok {
			res := rep.result(r)
			l.report(ctx, m, key, r, res, nil, 0, true)
			return res, nil
		}
	}
	if m == modeReset && l.deny != nil {
		// Before and after: a rejection cached while the reset is on its
		// way was decided on the state the reset deletes.
		l.deny.forgetKey(key)
		defer l.deny.forgetKey(key)
	}

	rep, err := l.send(ctx, m, key, lims, n, pinned)
	if err != nil {
		err = l.callError(ctx, m, key, err)
		l.report(ctx, m, key, r, Result{}, err, time.Since(start), false)
		return Result{}, err
	}

	if l.deny != nil && m != modePeek && m != modeReset {
		if rep.allowed {
			// An admission proves any rejection cached for a limit it
			// consumed stale (a Reset made elsewhere).
			l.deny.forgetLimits(key, lims)
		} else if cached {
			// Waits are measured from the reply, not the send: the
			// server decided before the reply left it, so a cached wait
			// is never shorter than the server's.
			if l.cfg.pinned == nil {
				now = time.Now()
			}
			l.deny.put(key, rule, lims, now, rep)
		}
	}
	res := rep.result(r)
	l.report(ctx, m, key, r, res, nil, time.Since(start), false)
	return res, nil
}

// check validates a call's input and returns the rule's limits: a
// Policy's, or a Limit appended to buf.
func check(key string, r Rule, n int, buf []Limit) ([]Limit, error) {
	if key == "" {
		return nil, fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	var lims []Limit
	switch r := r.(type) {
	case Limit:
		lims = append(buf, r)
	case Policy:
		lims = r
	default: // nil: Limit and Policy are the only Rules
		return nil, fmt.Errorf("%w: nil rule", ErrInvalidLimit)
	}
	if len(lims) == 0 {
		return nil, fmt.Errorf("%w: empty policy", ErrInvalidLimit)
	}
	for i, lim := range lims {
		if err := lim.validate(); err != nil {
			return nil, err
		}
		// Policies are short: a quadratic scan allocates nothing.
		for _, o := range lims[:i] {
			if o.id == lim.id {
				return nil, fmt.Errorf("%w: %v appears twice in the policy and would count every request twice", ErrInvalidLimit, lim)
			}
		}
		if n > lim.Burst() {
			return nil, fmt.Errorf("%w: %d is more than %v can ever admit at once (%d)", ErrInvalidN, n, lim, lim.Burst())
		}
	}
	if n <= 0 {
		return nil, fmt.Errorf("%w: %d, must be positive", ErrInvalidN, n)
	}
	return lims, nil
}

// callError wraps a failed script call, joining ctx's error when the
// context ended, so errors.Is(err, context.DeadlineExceeded) holds.
func (l *Limiter) callError(ctx context.Context, m mode, key string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("ratelimit: %s on %q: %w (%w)", m, key, cerr, err)
	}
	return fmt.Errorf("ratelimit: %s on %q: %w", m, key, err)
}

// validate checks a limit without touching the network: its parameters,
// and that the script counts them exactly.
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
	a, _ := l.numbers()
	if l.alg == AlgorithmGCRA {
		if l.burst <= 0 {
			return fmt.Errorf("%w: %v: burst must be positive", ErrInvalidLimit, l)
		}
		// The script's backlog reaches burst·a; beyond 2^53 a Lua number
		// would no longer count it exactly.
		if a > (maxExact-1)/int64(l.burst) {
			return fmt.Errorf("%w: %v: burst × period in µs ÷ gcd(period in µs, n) reaches 2^53, beyond what the script counts exactly", ErrInvalidLimit, l)
		}
	}
	// The log names a member by its time within the window and its count:
	// both below window·n, which must stay exact.
	if l.alg == AlgorithmSlidingLog && a > (maxExact-1)/int64(l.n) {
		return fmt.Errorf("%w: %v: n × window in µs reaches 2^53, beyond what the script counts exactly", ErrInvalidLimit, l)
	}
	return nil
}
