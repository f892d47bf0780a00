package model

import (
	"sort"
	"strings"
)

// A Status is what a settlement or an extension found of its reservation
// (settle.lua's and extend.lua's first number).
type Status int64

const (
	Found     Status = iota // outstanding: settled or extended now
	Committed               // committed before
	Canceled                // canceled before
	Gone                    // not found: released at its expiry
)

// A reservation is one member of a rule's record (reservations.lua): its
// id and expiry, and its state, 'r' outstanding (charged amount at at),
// 'c' committed (charged), 'x' canceled.
type reservation struct {
	id         string
	exp        int64
	state      byte
	at, amount int64
	charged    int64
}

// maxRelease is how many expired members one call releases or drops.
const maxRelease = 256

// Reserve is reserve.lua: after releasing the record's expired
// reservations, an Allow of amount at clock on lims; when granted, the
// reservation id recorded in the record rkey, charged at the time the
// grant was decided at, expiring ttl µs after. It returns the decision's
// reply, that time and the expiry (0 and 0 when rejected).
func (s *Store) Reserve(clock int64, keys []string, rkey string, lims []Limit, amount, ttl int64, id string) (Reply, int64, int64) {
	s.release(clock, keys, rkey, lims)
	r := s.Decide(clock, keys, lims, amount, Allow)
	if r.Granted == 0 {
		return r, 0, 0
	}
	at := s.states[keys[0]].guard // the decision's time, as each write keeps it
	exp := at + ttl
	s.record(rkey, &reservation{id: id, exp: exp, state: 'r', at: at, amount: amount})
	return r, at, exp
}

// Settle is settle.lua: the reservation id expiring at exp committed with
// actual (or canceled), once. It returns what it found, the units charged
// in all, and the reply of the Take of an excess over the amount, or else
// of a Peek, after it.
func (s *Store) Settle(clock int64, keys []string, rkey string, lims []Limit, actual int64, cancel bool, id string, exp int64) (Status, int64, Reply) {
	s.release(clock, keys, rkey, lims)
	st, charged := Gone, int64(0)
	var rep *Reply
	if v := s.find(rkey, id, exp); v != nil {
		switch v.state {
		case 'c':
			st, charged = Committed, v.charged
		case 'x':
			st = Canceled
		default:
			st = Found
			keep := min(actual, v.amount)
			if cancel {
				keep = 0
			}
			for i, L := range lims {
				s.giveBack(clock, keys[i], L, v.at, v.amount, keep)
			}
			charged = keep
			if !cancel && actual > v.amount {
				r := s.Decide(clock, keys, lims, actual-v.amount, Take)
				charged, rep = v.amount+r.Granted, &r
			}
			v.state, v.charged = 'x', charged
			if !cancel {
				v.state = 'c'
			}
		}
	}
	if rep == nil {
		r := s.Decide(clock, keys, lims, 1, Peek)
		rep = &r
	}
	return st, charged, *rep
}

// Extend is extend.lua: the reservation id moved from expiry from to to,
// once (found at to, it was moved already). One past its expiry is not
// found, and not released here.
func (s *Store) Extend(clock int64, rkey, id string, from, to int64) Status {
	var v *reservation
	for _, exp := range []int64{from, to} {
		if v == nil && exp > clock {
			v = s.find(rkey, id, exp)
		}
	}
	switch {
	case v == nil:
		return Gone
	case v.state == 'c':
		return Committed
	case v.state == 'x':
		return Canceled
	}
	v.exp = to
	return Found
}

func (s *Store) record(rkey string, v *reservation) {
	if s.records == nil {
		s.records = map[string][]*reservation{}
	}
	s.records[rkey] = append(s.records[rkey], v)
}

func (s *Store) find(rkey, id string, exp int64) *reservation {
	for _, v := range s.records[rkey] {
		if v.id == id && v.exp == exp {
			return v
		}
	}
	return nil
}

// release gives back in full every outstanding reservation of rkey whose
// expiry is at or before clock, and drops every settled one: at most
// maxRelease, first by expiry, then by member (the id first), as
// ZRANGEBYSCORE orders them.
func (s *Store) release(clock int64, keys []string, rkey string, lims []Limit) {
	rec := s.records[rkey]
	var gone []*reservation
	for _, v := range rec {
		if v.exp <= clock {
			gone = append(gone, v)
		}
	}
	if len(gone) == 0 {
		return
	}
	sort.Slice(gone, func(i, j int) bool {
		if gone[i].exp != gone[j].exp {
			return gone[i].exp < gone[j].exp
		}
		return strings.Compare(gone[i].id, gone[j].id) < 0
	})
	gone = gone[:min(len(gone), maxRelease)]
	for _, v := range gone {
		if v.state == 'r' {
			for i, L := range lims {
				s.giveBack(clock, keys[i], L, v.at, v.amount, 0)
			}
		}
	}
	left := rec[:0]
	for _, v := range rec {
		if !contains(gone, v) {
			left = append(left, v)
		}
	}
	if len(left) == 0 {
		delete(s.records, rkey)
		return
	}
	s.records[rkey] = left
}

func contains(vs []*reservation, v *reservation) bool {
	for _, w := range vs {
		if w == v {
			return true
		}
	}
	return false
}

// giveBack is reservations.lua's: of k units charged at at to limit L
// (state key), keep kept, the rest given back at clock as far as the
// limit still counts them; see ADR 0017.
func (s *Store) giveBack(clock int64, key string, L Limit, at, k, keep int64) {
	x := k - keep
	st := s.states[key]
	if st != nil && clock >= st.expire {
		delete(s.states, key)
		st = nil
	}
	if x <= 0 || st == nil {
		return
	}
	t := max(clock, st.guard)
	switch L.Alg {
	case 'l':
		if len(st.times) == 0 || at <= t-L.A {
			return
		}
		// The reservation's own members, all at at (names recorded at
		// Reserve): removing x of them leaves the same scores.
		times := st.times[:0]
		for _, v := range st.times {
			if v == at && x > 0 {
				x--
				continue
			}
			times = append(times, v)
		}
		st.times = times
		if len(times) == 0 {
			delete(s.states, key) // the sorted set emptied
			return
		}
		// The guard moves past every score left.
		st.guard = t
		if times[len(times)-1] >= t {
			st.guard = t + 1
		}
	case 'c':
		win := L.A
		start := t - floorMod(t, win)
		cur, prev := int64(0), int64(0)
		if st.guard >= start {
			cur, prev = st.c, st.p
		} else if st.guard >= start-win {
			prev = st.c
		}
		switch at - floorMod(at, win) {
		case start:
			cur -= min(cur, x)
		case start - win:
			prev -= min(prev, x)
		default:
			return // its bucket no longer counts
		}
		st.guard, st.c, st.p = t, cur, prev // KEEPTTL
	default:
		unit, drain := L.A, L.B
		q := max(st.q-(t-st.guard)*drain, 0)
		r := min(max(x*unit-max((t-at)*drain-keep*unit, 0), 0), q)
		q -= r
		st.guard, st.q = t, q
		st.expire = t + max(ceilDiv(q, drain*1000), 1)*1000
	}
}
