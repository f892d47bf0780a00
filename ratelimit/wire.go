package ratelimit

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// The contract between this package and its scripts, in one place. Every
// script (log.lua, counter.lua, gcra.lua, policy.lua, reset.lua) takes the
// same arguments and gives the same reply, for a single Limit as for a
// Policy: a single Limit is a policy of one on the wire. Only the script
// differs: a Limit runs its algorithm's own script, which costs the server
// about 30% less than policy.lua does for one limit (ADR 0008).
//
//	KEYS     the state of each limit: base(prefix, key) + the limit's id
//	ARGV[1]  n, the requests asked for
//	ARGV[2]  mode: 'allow' (all n or none), 'take' (up to n), 'peek'
//	ARGV[3]  a pinned time in µs, or '' for the server's TIME
//	ARGV[3+i] limit i: its algorithm's letter ('l', 'c' or 'g'), then its
//	         capacity and two numbers (see numbers), big-endian in 8
//	         bytes each
//	reply    granted, allowed (0/1), then per limit: allowed, remaining,
//	         retry-after µs, reset-after µs; big-endian in 8 bytes each
//
// Numbers go packed both ways: the server parses and prints none of them,
// which costs less than text numbers and a table reply.

// The reservations' scripts (reserve.lua, settle.lua, extend.lua) take
// the same KEYS and ARGV, with the rule's reservations as one more key,
// and arguments of their own around them and after the limits (each
// script's header; reservationRequest). Their replies frame a decision's
// reply, or stand alone (decode).

// send runs the script of call c on lims, directly or batched in its
// key's lane, and decodes its reply.
func (l *Limiter) send(ctx context.Context, c call, lims []Limit, pinned string) (reply, error) {
	req := c.request(l.cfg.prefix, lims, pinned)
	s := script(c.m, lims)
	var out luascripts.Reply
	if l.batch != nil {
		out = l.batch.Do(ctx, c.key, s, req.keys, req.args)
	} else {
		out = s.Run(ctx, l.client, req.keys, req.args...)
	}
	packed, err := out.Text()
	if err != nil {
		return reply{}, err
	}
	return decode(c.m, packed, len(lims))
}

// script returns the script that runs a call in mode m on lims.
func script(m mode, lims []Limit) *luascripts.Script {
	switch m {
	case modeReset:
		return resetScript
	case modeReserve:
		return reserveScript
	case modeCommit, modeCancel:
		return settleScript
	case modeExtend:
		return extendScript
	}
	p := policyScripts
	if len(lims) == 1 {
		switch lims[0].alg {
		case AlgorithmSlidingLog:
			p = logScripts
		case AlgorithmSlidingCounter:
			p = counterScripts
		default:
			p = gcraScripts
		}
	}
	if m == modePeek {
		return p.readOnly
	}
	return p.write
}

// A request is one call of a script: its keys and arguments.
type request struct {
	keys []string
	args []any
}

// request encodes call c on lims.
func (c *call) request(prefix string, lims []Limit, pinned string) request {
	switch c.m {
	case modeReserve:
		return reservationRequest(prefix, c.key, c.rule, lims, strconv.Itoa(c.n), itoa(c.ttl.Microseconds()), pinned, c.id)
	case modeCommit, modeCancel:
		return reservationRequest(prefix, c.key, c.rule, lims, strconv.Itoa(c.n), string(c.m), pinned, c.rs.ID, itoa(c.rs.exp))
	case modeExtend:
		exp, to := c.rs.extension(c.ttl)
		return reservationRequest(prefix, c.key, c.rule, lims, "", "", pinned, c.rs.ID, itoa(exp), itoa(to))
	}
	return newRequest(prefix, c.key, lims, c.m, c.n, pinned)
}

// newRequest encodes a call on the user key key under limits lims.
func newRequest(prefix, key string, lims []Limit, m mode, n int, pinned string) request {
	b := base(prefix, key)
	if len(lims) == 1 {
		one := &oneLimit{packed: packLimit(lims[0])}
		one.keys[0] = b + lims[0].id
		one.args = [4]any{n, m.arg(), pinned, one.packed[:]}
		return request{keys: one.keys[:], args: one.args[:]}
	}
	r := request{keys: make([]string, len(lims)), args: make([]any, 3, 3+len(lims))}
	r.args[0], r.args[1], r.args[2] = n, m.arg(), pinned
	for i, lim := range lims {
		r.keys[i] = b + lim.id
		p := packLimit(lim)
		r.args = append(r.args, string(p[:]))
	}
	return r
}

// reservationRequest is a reservation script's KEYS and ARGV: the limits'
// as newRequest lays them out, with a1 and a2 in place of n and the mode,
// then the rule's reservations as the last key, and extra arguments after
// the limits.
func reservationRequest(prefix, key string, r Rule, lims []Limit, a1, a2, pinned string, extra ...string) request {
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
	return request{keys: append(keys, b+"rsv:"+ruleName(r)), args: args}
}

// oneLimit is the backing of a request on one limit, every Limit's: its
// key, arguments and packed limit in one allocation instead of three, and
// the packed limit sent as a []byte, whose boxing is its only other one
// (a string's was two): BenchmarkAllow, 20 → 18 allocs per decision.
type oneLimit struct {
	keys   [1]string
	args   [4]any
	packed packedLimit
}

// arg is m as ARGV[2]. A constant string converted to an interface
// allocates nothing, a variable one 16 bytes: BenchmarkAllow, one
// allocation less per decision.
func (m mode) arg() any {
	switch m {
	case modeAllow:
		return string(modeAllow)
	case modeTake:
		return string(modeTake)
	case modePeek:
		return string(modePeek)
	}
	return string(m)
}

// base returns the part of every key of a call that the user's key
// determines: the prefix, then the key in its hash tag ("ratelimit:{user:42}:").
// All keys of one call share the hash tag, so Redis Cluster puts them in
// one slot and one script may touch them all.
func base(prefix, key string) string {
	return prefix + "{" + tagEscaper.Replace(key) + "}:"
}

// tagEscaper keeps a user's key from ending or emptying the hash tag it is
// placed in ("}" would give the tag "{}", which Redis ignores, scattering
// the call's keys over slots). Escaping '%' as well keeps it one-to-one, so
// distinct keys keep distinct limits.
var tagEscaper = strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D")

// letter is an algorithm's letter in key names and in the policy script's
// arguments.
func (a Algorithm) letter() string {
	switch a {
	case AlgorithmSlidingLog:
		return "l"
	case AlgorithmSlidingCounter:
		return "c"
	default:
		return "g"
	}
}

// A packedLimit is a limit as ARGV[3+i]: its letter, capacity and
// numbers.
type packedLimit [25]byte

func packLimit(lim Limit) (p packedLimit) {
	a, b := lim.numbers()
	p[0] = lim.alg.letter()[0]
	binary.BigEndian.PutUint64(p[1:], uint64(lim.Burst()))
	binary.BigEndian.PutUint64(p[9:], uint64(a))
	binary.BigEndian.PutUint64(p[17:], uint64(b))
	return p
}

// numbers are the two a limit's script counts with. Log and counter: the
// window in µs, and 0. GCRA counts in exact integers: each request adds a
// to a backlog that drains b per µs, a/b being the emission interval
// window/n reduced by their greatest common divisor.
func (l Limit) numbers() (a, b int64) {
	a = l.window.Microseconds()
	if l.alg == AlgorithmGCRA {
		b = int64(l.n)
		if g := gcd(a, b); g > 0 {
			a, b = a/g, b/g
		}
	}
	return a, b
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	if a < 0 {
		return -a
	}
	return a
}

// A reply is a script's answer, decoded.
type reply struct {
	granted int64
	allowed bool
	limits  []limitReply // one per limit, in the rule's order

	// A reservation's: when Reserve charged it and its expiry (µs); a
	// settlement's or an extension's status. A settlement's granted is
	// what it charged in all.
	at, exp int64
	status  status
}

// A status is what settle.lua and extend.lua found of the reservation.
type status int64

const (
	statusFound     status = iota // outstanding: settled or extended now
	statusCommitted               // committed before
	statusCanceled                // canceled before
	statusGone                    // not found: released at its expiry
)

// decode reads the reply of a call in mode m on n limits: a decision's
// (decodeReply); Reserve's, then its time and expiry; a settlement's
// status and charge, then the rule's decision after it; an extension's
// status alone.
func decode(m mode, s string, n int) (reply, error) {
	head, tail := 0, 0
	switch m {
	case modeReserve:
		tail = 16
	case modeCommit, modeCancel:
		head = 16
	case modeExtend:
		if len(s) != 8 {
			return reply{}, fmt.Errorf("unexpected reply %q", s)
		}
		return reply{status: status(binary.BigEndian.Uint64([]byte(s)))}, nil
	}
	if len(s) < head+tail {
		return reply{}, fmt.Errorf("unexpected reply %q", s)
	}
	r, err := decodeReply(s[head:len(s)-tail], n)
	if err != nil {
		return reply{}, err
	}
	if head > 0 {
		b := []byte(s[:head])
		r.status, r.granted = status(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint64(b[8:]))
	}
	if tail > 0 {
		b := []byte(s[len(s)-tail:])
		r.at, r.exp = int64(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint64(b[8:]))
	}
	return r, nil
}

// A limitReply is one limit's state in a reply; times in µs.
type limitReply struct {
	allowed                 bool
	remaining, retry, reset int64
}

// decodeReply reads a script's reply for a rule of n limits.
func decodeReply(s string, n int) (reply, error) {
	if len(s) != 8*(2+4*n) {
		return reply{}, fmt.Errorf("unexpected reply %q for %d limits", s, n)
	}
	next := func() int64 {
		v := int64(binary.BigEndian.Uint64([]byte(s[:8])))
		s = s[8:]
		return v
	}
	r := reply{granted: next(), allowed: next() == 1, limits: make([]limitReply, n)}
	for i := range r.limits {
		r.limits[i] = limitReply{allowed: next() == 1, remaining: next(), retry: next(), reset: next()}
	}
	return r, nil
}

// result is the Result of reply r for rule: for a Policy, the binding
// limit's, with every limit's in Each.
func (r reply) result(rule Rule) Result {
	if lim, ok := rule.(Limit); ok {
		return r.limitResult(0, lim)
	}
	p := rule.(Policy)
	each := make([]Result, len(p))
	bind := 0
	for i := range p {
		each[i] = r.limitResult(i, p[i])
		each[i].Allowed = r.limits[i].allowed
		// The binding limit: when allowed, the one with the fewest left;
		// when rejected, the one to wait for longest.
		b := each[bind]
		if r.allowed {
			if each[i].Remaining < b.Remaining {
				bind = i
			}
		} else if !each[i].Allowed && (b.Allowed || each[i].RetryAfter > b.RetryAfter) {
			bind = i
		}
	}
	res := each[bind]
	res.Allowed, res.Each = r.allowed, each
	if r.allowed {
		res.RetryAfter = 0
	}
	return res
}

// limitResult is limit i's part of r as a Result, with the call's Allowed.
func (r reply) limitResult(i int, lim Limit) Result {
	l := r.limits[i]
	res := Result{
		Allowed:    r.allowed,
		Limit:      lim,
		Granted:    int(r.granted),
		Remaining:  int(l.remaining),
		RetryAfter: ceilMillis(l.retry),
		ResetAfter: ceilMillis(l.reset),
	}
	if r.allowed {
		res.RetryAfter = 0
	}
	return res
}

// itoa formats a pinned time for ARGV[3].
func itoa(us int64) string { return strconv.FormatInt(us, 10) }

// ceilMillis turns microseconds into a Duration rounded up to the
// millisecond, so a wait is never reported shorter than it is.
func ceilMillis(us int64) time.Duration {
	if us <= 0 {
		return 0
	}
	return time.Duration((us+999)/1000) * time.Millisecond
}
