package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// Allow reports whether one request on key is admitted by r (a Limit or a
// Policy), and consumes it if so.
func (l *Limiter) Allow(ctx context.Context, key string, r Rule) (Result, error) {
	res, _, err := l.decide(ctx, call{m: modeAllow, key: key, rule: r, n: 1})
	return res, err
}

// AllowN admits n requests at once or none: a rejected AllowN consumes
// nothing. n larger than any limit's Burst is an error, since it could never
// succeed.
func (l *Limiter) AllowN(ctx context.Context, key string, r Rule, n int) (Result, error) {
	res, _, err := l.decide(ctx, call{m: modeAllow, key: key, rule: r, n: n})
	return res, err
}

// Take consumes as many of n requests as are available now, at least one,
// and reports how many in Result.Granted. When none is available it is
// rejected and RetryAfter says when one will be. As with AllowN, n more than
// a limit can ever admit at once (its Burst) is ErrInvalidN.
func (l *Limiter) Take(ctx context.Context, key string, r Rule, n int) (Result, error) {
	res, _, err := l.decide(ctx, call{m: modeTake, key: key, rule: r, n: n})
	return res, err
}

// Peek reports whether one request on key would be admitted now, and the
// remaining allowance, without consuming anything. It runs a read-only
// script (EVALSHA_RO), so it also works against a replica.
func (l *Limiter) Peek(ctx context.Context, key string, r Rule) (Result, error) {
	res, _, err := l.decide(ctx, call{m: modePeek, key: key, rule: r, n: 1})
	return res, err
}

// A mode is what a call does: the scripts' ARGV[2], and Reset's and the
// reservations' calls, whose scripts read no mode (settle.lua reads
// 'commit' or 'cancel').
type mode string

const (
	modeAllow   mode = "allow"
	modeTake    mode = "take"
	modePeek    mode = "peek"
	modeReset   mode = "reset"   // reset.lua
	modeReserve mode = "reserve" // reserve.lua
	modeCommit  mode = "commit"  // settle.lua
	modeCancel  mode = "cancel"  // settle.lua
	modeExtend  mode = "extend"  // extend.lua
)

// A call is one call of the Limiter, as decide checks, sends and reports
// it. A reservation's Commit, Cancel and Extend name the reservation,
// whose key and rule they act on.
type call struct {
	m    mode
	key  string
	rule Rule
	// n: the requests asked for; Reserve's amount; Commit's actual.
	n int
	// ttl: Reserve's; Extend's time added to the expiry.
	ttl time.Duration
	id  string       // Reserve: the new reservation's id
	rs  *Reservation // Commit, Cancel, Extend; its mu held by the caller
}

// decide is the one path of every call of a Limiter: Allow, AllowN,
// Take, Peek, Wait and WaitN (through AllowN), Reset, Reserve, and a
// Reservation's Commit, Cancel and Extend. It checks the input; answers
// from the deny cache when the cache holds the answer; otherwise sends the
// call's script, directly or batched (send, in wire.go), and decodes its
// reply; updates the deny cache; and reports the decision to the hook and
// the logger. The reply is returned for what a reservation keeps of it.
func (l *Limiter) decide(ctx context.Context, c call) (Result, reply, error) {
	var one [1]Limit // a Limit's limits, without an allocation
	lims, err := c.check(one[:0])
	if err != nil {
		return Result{}, reply{}, err
	}
	if l == nil || l.client == nil {
		return Result{}, reply{}, ErrNilClient // a Limiter not made by New
	}
	start := time.Now()
	now, pinned := l.clock(start)

	// A rejection of one request answers every call that needs one (Allow,
	// AllowN of 1, Take, Reserve of 1); it says nothing of more, or of a
	// Peek.
	cached := l.deny != nil && (c.n == 1 && (c.m == modeAllow || c.m == modeReserve) || c.m == modeTake)
	var rule string
	if cached {
		rule = ruleName(c.rule)
		if rep, ok := l.deny.get(c.key, rule, now); ok {
			res := rep.result(c.rule)
			l.report(ctx, c.m, c.key, c.rule, res, nil, 0, true)
			return res, rep, nil
		}
	}
	if c.m == modeReset && l.deny != nil {
		// Before and after: a rejection cached while the reset is on its
		// way was decided on the state the reset deletes.
		l.deny.forgetKey(c.key)
		defer l.deny.forgetKey(c.key)
	}

	rep, err := l.send(ctx, c, lims, pinned)
	if err != nil {
		err = luascripts.CallError(ctx, fmt.Sprintf("ratelimit: %s on %q", c.m, c.key), err)
		l.report(ctx, c.m, c.key, c.rule, Result{}, err, time.Since(start), false)
		return Result{}, reply{}, err
	}

	if l.deny != nil {
		switch {
		case c.m == modePeek || c.m == modeReset:
		case rep.allowed || c.rs != nil:
			// An admission proves any rejection cached for a limit it
			// consumed stale (a Reset made elsewhere); a settlement's
			// give-back, or the release of an expired reservation, makes
			// room no cached wait foresaw.
			l.deny.forgetLimits(c.key, lims)
		case cached:
			// Waits are measured from the reply, not the send: the
			// server decided before the reply left it, so a cached wait
			// is never shorter than the server's.
			if l.cfg.pinned == nil {
				now = time.Now()
			}
			l.deny.put(c.key, rule, lims, now, rep)
		}
	}
	res, err := c.result(rep)
	l.report(ctx, c.m, c.key, c.rule, res, err, time.Since(start), false)
	return res, rep, err
}

// clock returns the time of a call started at start: the pinned clock's
// when set, with its wire form, else start and "" (the server's TIME).
func (l *Limiter) clock(start time.Time) (time.Time, string) {
	if l.cfg.pinned != nil {
		now := l.cfg.pinned()
		return now, itoa(now.UnixMicro())
	}
	return start, ""
}

// check validates a call's input and returns its rule's limits: a
// Policy's, a Limit appended to buf, or a reservation's.
func (c *call) check(buf []Limit) ([]Limit, error) {
	switch c.m {
	case modeCommit, modeCancel, modeExtend:
		return c.checkReservation()
	case modeReserve:
		lims, err := check(c.key, c.rule, c.n, buf)
		if err == nil && (c.ttl < time.Millisecond || c.ttl > MaxReservationTTL) {
			err = fmt.Errorf("%w: %v, must be from 1ms to %v", ErrInvalidTTL, c.ttl, MaxReservationTTL)
		}
		return lims, err
	}
	return check(c.key, c.rule, c.n, buf)
}

// checkReservation checks a Commit, Cancel or Extend of c.rs, and sets
// the call's key and rule to the reservation's.
func (c *call) checkReservation() ([]Limit, error) {
	r := c.rs
	switch {
	case c.m == modeCommit && c.n < 0:
		return nil, fmt.Errorf("%w: actual %d, must not be negative", ErrInvalidN, c.n)
	case c.m == modeExtend && (c.ttl < time.Millisecond || c.ttl > MaxReservationTTL):
		return nil, fmt.Errorf("%w: extend by %v, must be from 1ms to %v", ErrInvalidTTL, c.ttl, MaxReservationTTL)
	case r == nil:
		return nil, fmt.Errorf("%w: nil reservation", ErrSettled)
	case r.l == nil:
		// A zero Reservation, not one Reserve returned: never admitted.
		return nil, fmt.Errorf("%w: %s of a zero Reservation", ErrSettled, c.m)
	case r.closed:
		return nil, fmt.Errorf("%w: %s of reservation %q on %q", ErrSettled, c.m, r.ID, r.key)
	}
	c.key, c.rule = r.key, r.rule
	if c.m == modeCommit {
		for _, lim := range r.lims {
			if err := lim.charges(c.n); err != nil {
				return nil, err
			}
		}
	}
	return r.lims, nil
}

// result is the Result and error of a call that the server answered rep:
// a decision's Result; a settlement's, with what it charged; the
// reservation found settled or expired as an error.
func (c *call) result(rep reply) (Result, error) {
	switch c.m {
	case modeCommit, modeCancel:
		rep.allowed = c.m == modeCancel || rep.granted == int64(c.n)
		switch {
		case rep.status == statusGone && c.m == modeCommit:
			return Result{}, fmt.Errorf("%w: commit of reservation %q on %q", ErrExpired, c.rs.ID, c.key)
		case rep.status == statusCommitted && c.m == modeCancel, rep.status == statusCanceled && c.m == modeCommit:
			return Result{}, fmt.Errorf("%w: %s of reservation %q on %q, which was settled the other way first", ErrSettled, c.m, c.rs.ID, c.key)
		}
	case modeExtend:
		switch rep.status {
		case statusGone:
			return Result{}, fmt.Errorf("%w: extend of reservation %q on %q", ErrExpired, c.rs.ID, c.key)
		case statusCommitted, statusCanceled:
			return Result{}, fmt.Errorf("%w: extend of reservation %q on %q, which was settled first", ErrSettled, c.rs.ID, c.key)
		}
		return Result{Allowed: true}, nil
	}
	return rep.result(c.rule), nil
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
		if err := lim.charges(n); err != nil {
			return nil, err
		}
	}
	if n <= 0 {
		return nil, fmt.Errorf("%w: %d, must be positive", ErrInvalidN, n)
	}
	return lims, nil
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
	// Longer windows overflow a Duration (a sliding counter's reset is
	// twice its window) or reach past the server's clock in µs (a log's
	// window floor).
	if l.window > MaxWindow {
		return fmt.Errorf("%w: %v: window must be at most %v (ten years)", ErrInvalidLimit, l, MaxWindow)
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
	// The counter holds two windows' counts, each up to n.
	if l.alg == AlgorithmSlidingCounter && int64(l.n) >= maxExact/2 {
		return fmt.Errorf("%w: %v: n reaches 2^52, so two windows' counts reach 2^53, beyond what the script counts exactly", ErrInvalidLimit, l)
	}
	// The log names a member by its time within the window and its count:
	// both below window·n, which must stay exact.
	if l.alg == AlgorithmSlidingLog && a > (maxExact-1)/int64(l.n) {
		return fmt.Errorf("%w: %v: n × window in µs reaches 2^53, beyond what the script counts exactly", ErrInvalidLimit, l)
	}
	return nil
}
