// Package model is ratelimit's scripts in Go: the same decisions, formula
// for formula, on state kept in a map instead of Redis keys. It takes the
// scripts' arguments (each limit's letter, capacity and two numbers, as
// wire.go packs them) and gives their reply, so a test can hold a script
// and the model to the same answers, and ratelimittest's in-memory Limiter
// runs it. policy.lua is the source it transcribes: a single limit is a
// policy of one, as on the wire (TestPolicyLimitDisagreesWithItsOwnScript
// holds the single-limit scripts to policy.lua's answers).
//
// Times are µs. A Store is not safe for concurrent use.
package model

import (
	"math"
	"sort"
)

// A Mode is a script's ARGV[2].
type Mode int

const (
	Allow Mode = iota // all n or none
	Take              // as many of n as there are, at least one
	Peek              // decide, consume nothing, write nothing
)

// A Limit is one limit as the scripts receive it: its algorithm's letter
// ('l', 'c' or 'g'), its capacity (n, or the burst for GCRA) and its two
// numbers (log and counter: the window in µs and 0; GCRA: unit and drain).
type Limit struct {
	Alg  byte
	Cap  int64
	A, B int64
}

// A Reply is a script's reply, decoded.
type Reply struct {
	Granted int64
	Allowed bool
	Limits  []LimitReply // one per limit, in order
}

// A LimitReply is one limit's part of a Reply; times in µs.
type LimitReply struct {
	Allowed                 bool
	Remaining, Retry, Reset int64
}

// A Store holds the state of every limit of every key, each under the
// name the caller gives it (a script's KEYS[i]).
type Store struct {
	states  map[string]*state
	sweep   int                       // the size at which the next write sweeps expired states
	records map[string][]*reservation // each rule's reservations (reserve.go)
}

// state is one limit's key. Which fields it uses is its algorithm's:
// the log its times, the counter c and p, GCRA q.
type state struct {
	// expire is when the key is gone, as Redis expires it: PX/PEXPIRE in
	// ms from the write that set it; writes with KEEPTTL keep it.
	expire int64
	// guard is the latest time the limit was decided at: the log's newest
	// member's score or a later rejection's time; the counter's and GCRA's t.
	guard int64
	times []int64 // the log's members' scores, oldest first
	c, p  int64   // the counter's counts: of guard's bucket, of the one before
	q     int64   // GCRA's backlog at guard
}

// NewStore returns an empty Store.
func NewStore() *Store { return &Store{states: map[string]*state{}, sweep: 1024} }

// Len is the number of keys held, expired ones not yet dropped included.
func (s *Store) Len() int { return len(s.states) }

// Reset deletes keys (reset.lua) and returns its reply: nothing granted,
// every limit full.
func (s *Store) Reset(keys []string, lims []Limit) Reply {
	r := Reply{Allowed: true, Limits: make([]LimitReply, len(lims))}
	for i, k := range keys {
		delete(s.states, k)
		r.Limits[i] = LimitReply{Allowed: true, Remaining: lims[i].Cap}
	}
	return r
}

// Decide runs a call of n requests in mode m at clock (µs) on the limits
// lims, whose states are named keys: policy.lua's read, weigh and write.
func (s *Store) Decide(clock int64, keys []string, lims []Limit, n int64, m Mode) Reply {
	// Read: every limit's state (nil: no key); time never goes back, so the
	// call uses the latest of the clock and every guard.
	now := clock
	sts := make([]*state, len(lims))
	for i, k := range keys {
		st := s.states[k]
		if st != nil && clock >= st.expire {
			delete(s.states, k)
			st = nil
		}
		sts[i] = st
		if st != nil && st.guard > now {
			now = st.guard
		}
	}

	// Weigh: each limit's availability at now, and the least of them.
	ws := make([]weight, len(lims))
	avail := int64(math.MaxInt64)
	for i, L := range lims {
		ws[i] = weigh(L, sts[i], now)
		avail = min(avail, ws[i].avail)
	}

	granted, need := int64(0), n
	switch {
	case m == Take:
		granted, need = min(n, avail), 1
	case m == Allow && avail >= n:
		granted = n
	}
	r := Reply{Granted: granted, Allowed: granted > 0 || m == Peek && avail >= n, Limits: make([]LimitReply, len(lims))}
	touch := granted == 0 && m != Peek

	// Write: consume granted on every limit, or on a rejection compute each
	// limit's wait and keep its guard.
	for i, L := range lims {
		var st *state
		if granted > 0 || touch {
			st = sts[i]
		}
		switch L.Alg {
		case 'l':
			r.Limits[i] = s.writeLog(keys[i], L, st, ws[i], now, granted, need, touch)
		case 'c':
			r.Limits[i] = s.writeCounter(keys[i], L, st, ws[i], now, granted, need, touch)
		default:
			r.Limits[i] = s.writeGCRA(keys[i], L, st, ws[i], now, granted, need, touch)
		}
	}
	if granted > 0 && len(s.states) >= s.sweep {
		s.dropExpired(clock)
	}
	return r
}

// weight is one limit's state at now: what weigh reads and write uses.
type weight struct {
	avail int64
	// log: the live members, oldest first
	live []int64
	// counter: the counts at now, and now's bucket's start
	cur, prev, start int64
	// GCRA: the backlog drained to now
	q int64
}

func weigh(L Limit, st *state, now int64) weight {
	var w weight
	switch L.Alg {
	case 'l':
		win := L.A
		if st != nil {
			// ZCOUNT key (now-win +inf
			at := sort.Search(len(st.times), func(j int) bool { return st.times[j] > now-win })
			w.live = st.times[at:]
		}
		w.avail = max(L.Cap-int64(len(w.live)), 0)
	case 'c':
		win := L.A
		e := floorMod(now, win)
		w.start = now - e
		if st != nil {
			if st.guard >= w.start {
				w.cur, w.prev = st.c, st.p
			} else if st.guard >= w.start-win {
				w.prev = st.c
			}
		}
		w.avail = max(counterAvail(L.Cap, w.cur, w.prev, win, e), 0)
	default:
		unit, drain := L.A, L.B
		if st != nil {
			w.q = drained(st.q, now-st.guard, drain)
		}
		w.avail = max(floorDiv(L.Cap*unit-w.q, unit), 0)
	}
	return w
}

func (s *Store) writeLog(key string, L Limit, st *state, w weight, now, granted, need int64, touch bool) LimitReply {
	win := L.A
	count := int64(len(w.live))
	if granted > 0 {
		// ZREMRANGEBYSCORE -inf now-win, ZADD granted members at now,
		// PEXPIRE ceil(win/1000) ms.
		times := make([]int64, 0, count+granted)
		times = append(times, w.live...)
		for range granted {
			times = append(times, now)
		}
		s.states[key] = &state{expire: now + ceilDiv(win, 1000)*1000, guard: now, times: times}
		return LimitReply{Allowed: true, Remaining: w.avail - granted, Reset: win}
	}
	r := LimitReply{Allowed: true, Remaining: w.avail}
	if count > 0 {
		r.Reset = max(w.live[count-1]+win-now, 0) // the newest member's score
	}
	if w.avail < need {
		// Wait until enough of the oldest live members age out.
		r.Allowed = false
		r.Retry = w.live[count-L.Cap+need-1] + win - now
	}
	if touch && count > 0 && now > st.guard {
		st.guard = now // the time goes in the newest member's name; TTL kept
	}
	return r
}

func (s *Store) writeCounter(key string, L Limit, st *state, w weight, now, granted, need int64, touch bool) LimitReply {
	win, cap := L.A, L.Cap
	e := now - w.start
	cur, prev := w.cur, w.prev
	if granted > 0 {
		cur += granted
		// The key lives until the state is empty: cur leaves the window
		// after the next bucket.
		reset := 2*win - e
		s.states[key] = &state{expire: now + ceilDiv(reset, 1000)*1000, guard: now, c: cur, p: prev}
		return LimitReply{Allowed: true, Remaining: max(counterAvail(cap, cur, prev, win, e), 0), Reset: reset}
	}
	r := LimitReply{Allowed: true, Remaining: w.avail}
	if cur > 0 {
		r.Reset = 2*win - e
	} else if prev > 0 {
		r.Reset = win - e
	}
	if w.avail < need {
		r.Allowed = false
		r.Retry = counterWait(cap, cur, prev, win, e, w.start, now, need)
	}
	if touch && cur+prev > 0 && now > st.guard {
		// Rebased on now, TTL kept (SET … KEEPTTL).
		st.guard, st.c, st.p = now, cur, prev
	}
	return r
}

func (s *Store) writeGCRA(key string, L Limit, st *state, w weight, now, granted, need int64, touch bool) LimitReply {
	unit, drain := L.A, L.B
	q := w.q
	r := LimitReply{Allowed: true, Remaining: w.avail}
	if granted > 0 {
		q += granted * unit
		r.Remaining = w.avail - granted
	}
	r.Reset = ceilDiv(q, drain) // when the backlog is empty
	if granted > 0 {
		s.states[key] = &state{expire: now + ceilDiv(r.Reset, 1000)*1000, guard: now, q: q}
		return r
	}
	if w.avail < need {
		// The backlog must fall to what leaves room for need.
		r.Allowed = false
		r.Retry = ceilDiv(q-(L.Cap-need)*unit, drain)
	}
	if touch && q > 0 && now > st.guard {
		st.guard, st.q = now, q // TTL kept (SET … KEEPTTL)
	}
	return r
}

// counterAvail is the counter's floor(cap - prev·(win-e)/win - cur + eps),
// in float64 as Lua computes it, operation for operation. eps absorbs
// float noise in the weighted sum, never a whole request (counter.lua).
func counterAvail(cap, cur, prev, win, e int64) int64 {
	eps := math.Min(1e-9, 0.5/float64(win))
	weighted := float64(prev) * float64(win-e) / float64(win) // a division between: no fused multiply-add
	return int64(math.Floor(float64(cap) - weighted - float64(cur) + eps))
}

// counterWait is counter.lua's wait: a closed-form guess in float64, then
// corrected by a µs at a time until need requests are admitted.
func counterWait(cap, cur, prev, win, e, start, now, need int64) int64 {
	target := cap - need // the weighted count must fall to this
	d := 0.0
	if cur > target {
		d = float64(win-e) + float64(win) - float64(target)*float64(win)/float64(cur)
	} else if prev > 0 {
		d = float64(win) - float64(target-cur)*float64(win)/float64(prev) - float64(e)
	}
	wait := max(int64(math.Ceil(d)), 0)
	for range 64 {
		at := now + wait
		var ce, pe, el int64 // counts and elapsed in at's bucket
		if at < start+win {
			ce, pe, el = cur, prev, at-start
		} else if at < start+2*win {
			pe, el = cur, at-start-win
		}
		if counterAvail(cap, ce, pe, win, el) >= need {
			break
		}
		wait++
	}
	return wait
}

// drained is backlog q after elapsed µs at drain per µs, never below 0,
// without overflowing where elapsed·drain is large.
func drained(q, elapsed, drain int64) int64 {
	if elapsed >= ceilDiv(q, drain) {
		return 0
	}
	return q - elapsed*drain
}

// dropExpired deletes the keys expired at clock, and sets the size at
// which the next sweep runs, so sweeps cost O(1) per write.
func (s *Store) dropExpired(clock int64) {
	for k, st := range s.states {
		if clock >= st.expire {
			delete(s.states, k)
		}
	}
	s.sweep = max(2*len(s.states), 1024)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
