package ratelimit

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// MaxReservationTTL is the longest ttl of one Reserve, and the longest
// one Extend may add: a reservation is released by the server at most
// that long after it was made or last extended. Extend (and Keep, which
// extends) may keep one outstanding longer, one step at a time.
const MaxReservationTTL = time.Hour

// Errors of reservations; see also ErrInvalidN (an amount of zero or less
// or above a limit's Burst, a negative actual) and the package's others.
var (
	// ErrInvalidTTL: a reservation's ttl is under a millisecond or above
	// MaxReservationTTL. Returned before any round trip.
	ErrInvalidTTL = errors.New("ratelimit: invalid reservation ttl")
	// ErrSettled: Commit or Cancel of a Reservation that was settled
	// already (by this value, or by a retried call whose first reply was
	// lost and which turned out to be the other of the two), or that was
	// never admitted. Nothing was charged or given back.
	ErrSettled = errors.New("ratelimit: reservation settled or never admitted")
	// ErrExpired: Commit of a reservation past its expiry, which the server
	// has released (given back). Nothing was charged. A Commit that ran
	// but whose reply was lost, retried after the expiry, gets it too.
	ErrExpired = errors.New("ratelimit: reservation expired")
)

// A Reservation holds an amount charged against a rule on a key until it
// is settled: Commit charges the actual cost and gives back the rest,
// Cancel gives it all back. A reservation not settled by its expiry is
// released by the server (given back, as Cancel would). Its methods are
// safe for concurrent use; the first settlement wins.
type Reservation struct {
	// ID names the reservation on the server: 16 random hex digits.
	// Empty when not admitted.
	ID string
	// Amount is the amount reserved.
	Amount int
	// Result is the admission's: Allowed reports whether the amount was
	// reserved; when not, RetryAfter says when it could be, and there is
	// nothing to settle.
	Result Result
	// At is when the server charged it, and Expires when it releases it
	// unless settled, both on the server's clock (or the pinned one).
	// Extend moves Expires; a Keeper's extensions, made in its own
	// goroutine, move the server's expiry but not this field.
	At, Expires time.Time

	l      *Limiter
	key    string
	rule   Rule
	lims   []Limit
	at     int64         // µs
	sent   time.Time     // when Reserve was sent, on the local clock
	ttl    time.Duration // Reserve's; what a Keeper keeps ahead
	mu     sync.Mutex
	exp    int64 // µs
	to     int64 // the expiry an extension whose reply was lost moves it to
	closed bool  // settled, never admitted, or found expired
}

// Reserve charges amount against every limit of r on key now, all or
// nothing across a Policy, as AllowN does, and holds it as a Reservation
// until Commit or Cancel, or until ttl has passed on the server's clock,
// when the next Reserve, Commit, Cancel or Extend of the same key and rule
// gives it back. Until then every call counts it: decisions of any rule
// sharing one of r's limits see it charged. Extend, or a Keeper (Keep),
// moves the expiry on for work that outlives ttl.
//
// A rejected Reserve charges nothing and returns a Reservation whose
// Result.Allowed is false. amount must be positive and at most every
// limit's Burst, and at most MaxLogCharge for a sliding log
// (ErrInvalidN); ttl between a millisecond and
// MaxReservationTTL (ErrInvalidTTL). As with AllowN, an error after the
// call was sent (ErrReplyLost, a context that ended) may leave a
// reservation on the server, which its ttl then releases.
func (l *Limiter) Reserve(ctx context.Context, key string, r Rule, amount int, ttl time.Duration) (*Reservation, error) {
	// The Reservation keeps its own copy: a Policy changed by the caller
	// after Reserve must not change what Commit gives back.
	lims := []Limit(nil)
	switch p := r.(type) {
	case Limit:
		lims = []Limit{p}
	case Policy:
		lims = slices.Clone(p)
		r = Policy(lims)
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	sent := time.Now()
	res, rep, err := l.decide(ctx, call{m: modeReserve, key: key, rule: r, n: amount, ttl: ttl, id: hex.EncodeToString(id[:])})
	if err != nil {
		return nil, err
	}
	rs := &Reservation{Amount: amount, Result: res, l: l, key: key, rule: r, lims: lims, closed: true}
	if rep.allowed {
		rs.ID, rs.at, rs.exp, rs.sent, rs.ttl, rs.closed = hex.EncodeToString(id[:]), rep.at, rep.exp, sent, ttl, false
		rs.At, rs.Expires = time.UnixMicro(rep.at), time.UnixMicro(rep.exp)
	}
	return rs, nil
}

// Commit charges actual for the reserved work and settles the
// reservation: what was reserved beyond actual is given back, as far as
// the limits still count it (ADR 0017: exactly for the sliding log and
// counter; for GCRA what has not drained yet). An actual above Amount
// keeps the whole reservation and charges the excess as Take would: what
// fits now under every limit, never more; Result.Allowed is false when not
// all of it fitted, and Result.Granted is what was charged in all.
//
// Commit is idempotent by the reservation's ID: retried after an error
// (or resent by the client after a failed connection) it charges once.
// After a successful settlement it returns ErrSettled without a round
// trip; past the expiry, ErrExpired, charging nothing (the server gave the
// reservation back). A negative actual is ErrInvalidN.
func (r *Reservation) Commit(ctx context.Context, actual int) (Result, error) {
	return r.do(ctx, call{m: modeCommit, n: actual})
}

// Cancel gives the whole reservation back, charging nothing (for GCRA,
// what has not drained yet: ADR 0017). It is idempotent by the
// reservation's ID like Commit. Canceling a reservation past its expiry
// returns no error: the server has given it back already. After a
// settlement it returns ErrSettled. The Result is the rule's state after.
func (r *Reservation) Cancel(ctx context.Context) (Result, error) {
	return r.do(ctx, call{m: modeCancel})
}

// do makes call c of the reservation (Commit, Cancel, Extend) on the path
// of every call (decide), one at a time: the first settlement wins.
func (r *Reservation) do(ctx context.Context, c call) (Result, error) {
	c.rs = r
	if r == nil {
		var l *Limiter // decide refuses a nil reservation before it reads l
		res, _, err := l.decide(ctx, c)
		return res, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.doLocked(ctx, c)
}

// doLocked is do with r.mu held.
func (r *Reservation) doLocked(ctx context.Context, c call) (Result, error) {
	c.rs = r
	if r.to != 0 && !r.closed {
		// An extension whose reply was lost may have moved the expiry
		// the call names the reservation by: sent again, it moves it
		// once, and then r knows where it is.
		_, _, err := r.l.decide(ctx, call{m: modeExtend, rs: r, ttl: time.Duration(r.to-r.exp) * time.Microsecond})
		switch {
		case err == nil:
			r.exp = r.to
		case !answered(err):
			return Result{}, err
		}
		r.to = 0
	}
	res, _, err := r.l.decide(ctx, c)
	switch {
	case c.m == modeExtend && err == nil:
		r.exp, r.to = r.to, 0
	case answered(err):
		r.closed = true
	}
	return res, err
}

// answered reports whether a reservation's call that returned err was
// answered by the server (and not refused before it, or lost): nil, or
// the reservation found settled or expired.
func answered(err error) bool {
	return err == nil || errors.Is(err, ErrExpired) || errors.Is(err, ErrSettled)
}

// deadline is the reservation's expiry on the local clock, no later than
// the server's: it was charged no sooner than Reserve was sent, and every
// extension moved it by exactly its time.
func (r *Reservation) deadline() time.Time {
	return r.sent.Add(time.Duration(r.exp-r.at) * time.Microsecond)
}

var (
	//go:embed reserve.lua
	reserveSource string
	//go:embed settle.lua
	settleSource string
	//go:embed extend.lua
	extendSource string

	reserveScript = newScript(luascripts.New("reserve.lua", reserveSource))
	// Settling recognises its own earlier run by the id, so the client may
	// send it again after a failed connection.
	settleScript = newScript(luascripts.NewIdempotent("settle.lua", settleSource))
	// An extension names both expiries, from and to, and moves the
	// reservation once: the client may send it again too.
	extendScript = newScript(luascripts.NewIdempotent("extend.lua", extendSource))
)
