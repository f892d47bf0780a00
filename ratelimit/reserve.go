package ratelimit

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// MaxReservationTTL is the longest a reservation may stay outstanding
// before the server releases it.
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

// The operations of reservations, as Event.Op (OpReserve, OpCommit,
// OpCancel) and in errors.
const (
	modeReserve mode = "reserve"
	modeCommit  mode = "commit"
	modeCancel  mode = "cancel"
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
	At, Expires time.Time

	l      *Limiter
	key    string
	rule   Rule
	lims   []Limit
	at     int64 // µs
	exp    int64 // µs
	mu     sync.Mutex
	closed bool // settled, or never admitted
}

// Reserve charges amount against every limit of r on key now, all or
// nothing across a Policy, as AllowN does, and holds it as a Reservation
// until Commit or Cancel, or until ttl has passed on the server's clock,
// when the next Reserve, Commit or Cancel of the same key and rule gives
// it back. Until then every call counts it: decisions of any rule sharing
// one of r's limits see it charged.
//
// A rejected Reserve charges nothing and returns a Reservation whose
// Result.Allowed is false. amount must be positive and at most every
// limit's Burst (ErrInvalidN); ttl between a millisecond and
// MaxReservationTTL (ErrInvalidTTL). As with AllowN, an error after the
// call was sent (ErrReplyLost, a context that ended) may leave a
// reservation on the server, which its ttl then releases.
func (l *Limiter) Reserve(ctx context.Context, key string, r Rule, amount int, ttl time.Duration) (*Reservation, error) {
	lims, err := check(key, r, amount, nil)
	if err != nil {
		return nil, err
	}
	if ttl < time.Millisecond || ttl > MaxReservationTTL {
		return nil, fmt.Errorf("%w: %v, must be from 1ms to %v", ErrInvalidTTL, ttl, MaxReservationTTL)
	}
	start := time.Now()
	now, pinned := l.clock(start)
	// The Reservation keeps its own copy: a Policy changed by the caller
	// after Reserve must not change what Commit gives back.
	lims = slices.Clone(lims)
	if _, ok := r.(Policy); ok {
		r = Policy(lims)
	}
	rs := &Reservation{Amount: amount, l: l, key: key, rule: r, lims: lims, closed: true}

	// A cached rejection of one request answers a reservation of one.
	var rule string
	cached := l.deny != nil && amount == 1
	if cached {
		rule = ruleName(r)
		if rep, ok := l.deny.get(key, rule, now); ok {
			rs.Result = rep.result(r)
			l.report(ctx, modeReserve, key, r, rs.Result, nil, 0, true)
			return rs, nil
		}
	}

	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	idHex := hex.EncodeToString(id[:])
	keys, args := reservationCall(l.cfg.prefix, key, r, lims, strconv.Itoa(amount), strconv.FormatInt(ttl.Microseconds(), 10), pinned, idHex)
	packed, err := l.run(ctx, reserveScript, key, keys, args).Text()
	var rep reply
	if err == nil {
		if len(packed) < 16 {
			err = fmt.Errorf("unexpected reply %q", packed)
		} else {
			rep, err = decodeReply(packed[:len(packed)-16], len(lims))
		}
	}
	if err != nil {
		err = l.callError(ctx, modeReserve, key, err)
		l.report(ctx, modeReserve, key, r, Result{}, err, time.Since(start), false)
		return nil, err
	}
	rs.Result = rep.result(r)
	if rep.allowed {
		tail := []byte(packed[len(packed)-16:])
		rs.at, rs.exp = int64(binary.BigEndian.Uint64(tail)), int64(binary.BigEndian.Uint64(tail[8:]))
		rs.ID, rs.At, rs.Expires, rs.closed = idHex, time.UnixMicro(rs.at), time.UnixMicro(rs.exp), false
		if l.deny != nil {
			l.deny.forgetLimits(key, lims)
		}
	} else if cached {
		if l.cfg.pinned == nil {
			now = time.Now()
		}
		l.deny.put(key, rule, lims, now, rep)
	}
	l.report(ctx, modeReserve, key, r, rs.Result, nil, time.Since(start), false)
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
	if actual < 0 {
		return Result{}, fmt.Errorf("%w: actual %d, must not be negative", ErrInvalidN, actual)
	}
	return r.settle(ctx, modeCommit, actual)
}

// Cancel gives the whole reservation back, charging nothing (for GCRA,
// what has not drained yet: ADR 0017). It is idempotent by the
// reservation's ID like Commit. Canceling a reservation past its expiry
// returns no error: the server has given it back already. After a
// settlement it returns ErrSettled. The Result is the rule's state after.
func (r *Reservation) Cancel(ctx context.Context) (Result, error) {
	return r.settle(ctx, modeCancel, 0)
}

// settle runs settle.lua for Commit or Cancel.
func (r *Reservation) settle(ctx context.Context, m mode, actual int) (Result, error) {
	if r == nil {
		return Result{}, fmt.Errorf("%w: nil reservation", ErrSettled)
	}
	if r.l == nil {
		// A zero Reservation, not one Reserve returned: never admitted.
		return Result{}, fmt.Errorf("%w: %s of a zero Reservation", ErrSettled, m)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return Result{}, fmt.Errorf("%w: %s of reservation %q on %q", ErrSettled, m, r.ID, r.key)
	}
	l := r.l
	start := time.Now()
	_, pinned := l.clock(start)
	keys, args := reservationCall(l.cfg.prefix, r.key, r.rule, r.lims, strconv.Itoa(actual), string(m), pinned, r.ID, strconv.FormatInt(r.exp, 10))
	packed, err := l.run(ctx, settleScript, r.key, keys, args).Text()
	var rep reply
	var status, charged int64
	if err == nil {
		if len(packed) < 16 {
			err = fmt.Errorf("unexpected reply %q", packed)
		} else {
			b := []byte(packed[:16])
			status, charged = int64(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint64(b[8:]))
			rep, err = decodeReply(packed[16:], len(r.lims))
		}
	}
	if err != nil {
		err = l.callError(ctx, m, r.key, err)
		l.report(ctx, m, r.key, r.rule, Result{}, err, time.Since(start), false)
		return Result{}, err
	}
	// A give-back makes room a cached rejection did not foresee.
	if l.deny != nil {
		l.deny.forgetLimits(r.key, r.lims)
	}
	rep.granted = charged
	rep.allowed = m == modeCancel || charged == int64(actual)
	res := rep.result(r.rule)
	switch {
	case status == 3 && m == modeCommit:
		err = fmt.Errorf("%w: commit of reservation %q on %q", ErrExpired, r.ID, r.key)
		res = Result{}
	case status == 1 && m == modeCancel, status == 2 && m == modeCommit:
		err = fmt.Errorf("%w: %s of reservation %q on %q, which was settled the other way first", ErrSettled, m, r.ID, r.key)
		res = Result{}
	}
	r.closed = true
	l.report(ctx, m, r.key, r.rule, res, err, time.Since(start), false)
	return res, err
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

// run sends a reservation script on the path every decision takes (send,
// in wire.go): batched in key's lane with WithBatching, directly otherwise.
func (l *Limiter) run(ctx context.Context, s *luascripts.Script, key string, keys []string, args []any) luascripts.Reply {
	if l.batch != nil {
		return l.batch.Do(ctx, key, s, keys, args)
	}
	return s.Run(ctx, l.client, keys, args...)
}

// reservationCall is the KEYS and ARGV of reserve.lua and settle.lua: the
// limits' as wire.go lays them out, then the rule's reservations, then
// extra arguments after the limits.
func reservationCall(prefix, key string, r Rule, lims []Limit, a1, a2, pinned string, extra ...string) ([]string, []any) {
	b := base(prefix, key)
	keys := make([]string, len(lims), len(lims)+1)
	args := make([]any, 3, 3+len(lims)+len(extra))
	args[0], args[1], args[2] = a1, a2, pinned
	for i, lim := range lims {
		keys[i] = b + lim.id
		p := packLimit(lim)
		args = append(args, string(p[:]))
	}
	for _, e := range extra {
		args = append(args, e)
	}
	return append(keys, b+"rsv:"+ruleName(r)), args
}

var (
	//go:embed reservations.lua
	reservationsSource string
	//go:embed reserve.lua
	reserveSource string
	//go:embed settle.lua
	settleSource string

	reserveScript = newScript(luascripts.New("reserve.lua", reservationScript(reserveSource)))
	// Settling recognises its own earlier run by the id, so the client may
	// send it again after a failed connection.
	settleScript = newScript(luascripts.NewIdempotent("settle.lua", reservationScript(settleSource)))
)

// reservationScript puts a reservation script together: its first line,
// policy.lua as a function policy(KEYS, ARGV) that decides and charges
// exactly as a Policy's call does, reservations.lua's shared functions,
// then the script's body. A Lua error's line number counts from the top
// of that whole text. policy.lua answers a read it cannot make with an
// error reply (TRYAGAIN in a slot being migrated): as a Policy's whole
// call it has written nothing then, but a reservation script may have
// (expired reservations released, a settlement's give-back), so policy
// raises it instead, an error the client does not send again.
func reservationScript(src string) string {
	first, rest, _ := strings.Cut(src, "\n")
	return first + "\nlocal function decide(KEYS, ARGV)\n" + readFunction + policySource + "\nend\n" +
		"local function policy(KEYS, ARGV)\n" +
		"  local rep = decide(KEYS, ARGV)\n" +
		"  if type(rep) == 'table' then\n" +
		"    error(rep.err)\n" +
		"  end\n" +
		"  return rep\n" +
		"end\n" + reservationsSource + "\n" + rest
}
