package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// The reference model of reservations: the state of each limit, written
// from the package documentation and the scripts' comments as plain Go
// integers (the counter's weighted count in the same float formula), and
// a ledger of what each reservation finally charges, for the invariant.
// It knows nothing of the wire, the record's layout or member names.

// An mlimit is one limit's state in the model.
type mlimit struct {
	alg        byte
	cap, a, b  int64 // as the scripts count: log, counter: window; GCRA: unit, drain
	guard      int64 // the latest time the state was decided at; -1: none
	members    []mmember
	c, p, q, t int64 // counter: counts of bucket t; GCRA: backlog at t
	has        bool  // counter, GCRA: the key exists
}

// An mmember is one request in the model's log: its time and its owner.
type mmember struct {
	at    int64
	owner string // the reservation's id, or ""
}

func newMLimit(lim ratelimit.Limit) *mlimit {
	m := &mlimit{cap: int64(lim.Burst()), a: lim.Window().Microseconds(), guard: -1}
	switch lim.Algorithm() {
	case ratelimit.AlgorithmSlidingLog:
		m.alg = 'l'
	case ratelimit.AlgorithmSlidingCounter:
		m.alg = 'c'
	default:
		m.alg, m.b = 'g', int64(lim.N())
		for x, y := m.a, m.b; ; { // reduce unit/drain by their gcd
			if y == 0 {
				m.a, m.b = m.a/x, m.b/x
				break
			}
			x, y = y, x%y
		}
	}
	return m
}

func (m *mlimit) live(now int64) int64 {
	n := int64(0)
	for _, e := range m.members {
		if e.at > now-m.a {
			n++
		}
	}
	return n
}

// counts returns the counter's current and previous bucket counts at now,
// the elapsed time in now's bucket and its start.
func (m *mlimit) counts(now int64) (cur, prev, e, start int64) {
	e = now % m.a
	start = now - e
	if m.has && m.t >= start {
		cur, prev = m.c, m.p
	} else if m.has && m.t >= start-m.a {
		prev = m.c
	}
	return cur, prev, e, start
}

func (m *mlimit) counterAvail(cur, prev, e int64) int64 {
	win := float64(m.a)
	eps := math.Min(1e-9, 0.5/win)
	return max(int64(math.Floor(float64(m.cap)-float64(prev)*float64(m.a-e)/win-float64(cur)+eps)), 0)
}

func (m *mlimit) drained(now int64) int64 {
	if !m.has {
		return 0
	}
	return max(m.q-(now-m.t)*m.b, 0)
}

func (m *mlimit) avail(now int64) int64 {
	switch m.alg {
	case 'l':
		return max(m.cap-m.live(now), 0)
	case 'c':
		cur, prev, e, _ := m.counts(now)
		return m.counterAvail(cur, prev, e)
	}
	room := m.cap*m.a - m.drained(now)
	return max(room/m.a, 0)
}

// charge adds k requests at now, owned by owner; it returns what the
// limit has left.
func (m *mlimit) charge(now, k int64, owner string) int64 {
	left := m.avail(now) - k
	switch m.alg {
	case 'l':
		m.members = slices.DeleteFunc(m.members, func(e mmember) bool { return e.at <= now-m.a })
		for range k {
			m.members = append(m.members, mmember{now, owner})
		}
	case 'c':
		cur, prev, e, _ := m.counts(now)
		m.c, m.p, m.t, m.has = cur+k, prev, now, true
		left = m.counterAvail(m.c, m.p, e)
	default:
		m.q, m.t, m.has = m.drained(now)+k*m.a, now, true
	}
	m.guard = now
	return left
}

// touch is a rejection's: it keeps the time on a state that holds any.
func (m *mlimit) touch(now int64) {
	if now <= m.guard {
		return
	}
	switch m.alg {
	case 'l':
		if m.live(now) > 0 {
			m.guard = now
		}
	case 'c':
		if cur, prev, _, _ := m.counts(now); cur+prev > 0 {
			m.c, m.p, m.t, m.guard = cur, prev, now, now
		}
	default:
		if q := m.drained(now); q > 0 {
			m.q, m.t, m.guard = q, now, now
		}
	}
}

// giveBack returns x units of reservation id, charged at at, keep kept, at now.
func (m *mlimit) giveBack(id string, at, x, keep, now int64) {
	if x <= 0 {
		return
	}
	switch m.alg {
	case 'l':
		if len(m.members) == 0 {
			return
		}
		t := max(now, m.guard)
		if at <= t-m.a {
			return
		}
		left := x
		m.members = slices.DeleteFunc(m.members, func(e mmember) bool {
			if e.owner == id && left > 0 {
				left--
				return true
			}
			return false
		})
		if len(m.members) == 0 {
			m.guard = -1
			return
		}
		newest := int64(-1)
		for _, e := range m.members {
			newest = max(newest, e.at)
		}
		m.guard = t
		if newest >= t {
			m.guard = t + 1
		}
	case 'c':
		if !m.has {
			return
		}
		t := max(now, m.t)
		cur, prev, _, start := m.counts(t)
		switch at - at%m.a {
		case start:
			cur -= min(cur, x)
		case start - m.a:
			prev -= min(prev, x)
		default:
			return
		}
		m.c, m.p, m.t, m.guard = cur, prev, t, t
	default:
		if !m.has {
			return
		}
		t := max(now, m.t)
		q := m.drained(t)
		r := min(max(x*m.a-max((t-at)*m.b-keep*m.a, 0), 0), q)
		m.q, m.t, m.guard = q-r, t, t
	}
}

// A model is one key under one rule: its limits, the outstanding and
// settled reservations, and the ledger of every charge.
type model struct {
	ls     []*mlimit
	lims   []ratelimit.Limit
	rsv    map[string]*mres
	ledger []*mcharge
}

// An mres is a reservation in the model.
type mres struct {
	id         string
	at, exp, k int64
	state      byte // 'r' outstanding, 'c' committed, 'x' canceled
	charged    int64
	entry      *mcharge
}

// An mcharge is one charge in the ledger: what it counts now.
type mcharge struct{ at, amount int64 }

func newModel(r ratelimit.Rule) *model {
	md := &model{rsv: map[string]*mres{}}
	if lim, ok := r.(ratelimit.Limit); ok {
		md.lims = []ratelimit.Limit{lim}
	} else {
		md.lims = r.(ratelimit.Policy)
	}
	for _, lim := range md.lims {
		md.ls = append(md.ls, newMLimit(lim))
	}
	return md
}

func (md *model) now(clock int64) int64 {
	now := clock
	for _, m := range md.ls {
		now = max(now, m.guard)
	}
	return now
}

// decide is a Policy's call: allow (all k or none), take (up to k) or peek.
func (md *model) decide(clock, k int64, mode, owner string) (granted int64, remaining []int64) {
	now := md.now(clock)
	avail := int64(math.MaxInt64)
	remaining = make([]int64, len(md.ls))
	for i, m := range md.ls {
		remaining[i] = m.avail(now)
		avail = min(avail, remaining[i])
	}
	switch {
	case mode == "take":
		granted = min(k, avail)
	case mode == "allow" && avail >= k:
		granted = k
	}
	for i, m := range md.ls {
		if granted > 0 {
			remaining[i] = m.charge(now, granted, owner)
		} else if mode != "peek" {
			m.touch(now)
		}
	}
	if granted > 0 && owner == "" {
		md.ledger = append(md.ledger, &mcharge{now, granted})
	}
	return granted, remaining
}

// release gives back every outstanding reservation past its expiry at
// clock and forgets settled ones, in the record's order.
func (md *model) release(clock int64) {
	var gone []*mres
	for _, r := range md.rsv {
		if r.exp <= clock {
			gone = append(gone, r)
		}
	}
	slices.SortFunc(gone, func(a, b *mres) int {
		if a.exp != b.exp {
			return int(a.exp - b.exp)
		}
		return strings.Compare(a.id, b.id)
	})
	for _, r := range gone {
		if r.state == 'r' {
			for _, m := range md.ls {
				m.giveBack(r.id, r.at, r.k, 0, clock)
			}
			r.entry.amount = 0
		}
		delete(md.rsv, r.id)
	}
}

func (md *model) reserve(clock, k, ttl int64, id string) (bool, []int64) {
	md.release(clock)
	granted, rem := md.decide(clock, k, "allow", id)
	if granted == 0 {
		return false, rem
	}
	now := md.ls[0].guard
	r := &mres{id: id, at: now, exp: now + ttl, k: k, state: 'r', entry: &mcharge{now, k}}
	md.ledger = append(md.ledger, r.entry)
	md.rsv[id] = r
	return true, rem
}

// settle is settle.lua's: it returns the status, the charged units and
// the rule's remaining after.
func (md *model) settle(clock int64, id string, exp, actual int64, cancel bool) (int64, int64, []int64) {
	md.release(clock)
	r, ok := md.rsv[id]
	if !ok || r.exp != exp {
		_, rem := md.decide(clock, 1, "peek", "")
		return 3, 0, rem
	}
	switch r.state {
	case 'c':
		_, rem := md.decide(clock, 1, "peek", "")
		return 1, r.charged, rem
	case 'x':
		_, rem := md.decide(clock, 1, "peek", "")
		return 2, 0, rem
	}
	keep := min(actual, r.k)
	if cancel {
		keep = 0
	}
	for _, m := range md.ls {
		m.giveBack(id, r.at, r.k-keep, keep, clock)
	}
	r.entry.amount, r.charged = keep, keep
	var rem []int64
	if !cancel && actual > r.k {
		var g int64
		g, rem = md.decide(clock, actual-r.k, "take", "")
		r.charged += g
	} else {
		_, rem = md.decide(clock, 1, "peek", "")
	}
	r.state = 'c'
	if cancel {
		r.state = 'x'
	}
	return 0, r.charged, rem
}

// exceeded reports a limit that what the ledger charges now, outstanding
// reservations at their amount, exceeds at now: the log in the window,
// GCRA as a bucket replayed from the start. The counter is approximate by
// design and is held to the model's count instead.
func (md *model) exceeded(now int64) string {
	slices.SortStableFunc(md.ledger, func(a, b *mcharge) int { return int(a.at - b.at) })
	for _, m := range md.ls {
		switch m.alg {
		case 'l':
			for _, end := range md.ledger {
				n := int64(0)
				for _, c := range md.ledger {
					if c.at > end.at-m.a && c.at <= end.at {
						n += c.amount
					}
				}
				if n > m.cap {
					return fmt.Sprintf("log %d/%dµs: %d charged in the window ending at %d", m.cap, m.a, n, end.at)
				}
			}
		case 'g':
			q, t := int64(0), int64(0)
			for _, c := range md.ledger {
				q = max(q-(c.at-t)*m.b, 0) + c.amount*m.a
				t = c.at
				if q > m.cap*m.a {
					return fmt.Sprintf("gcra burst %d: backlog %d units over %d at %d", m.cap, q/m.a, m.cap, c.at)
				}
			}
		}
	}
	return ""
}

const debugTrace = false

// errLost is the error of a call whose reply loseReply dropped.
var errLost = errors.New("test: reply lost")

// loseReply, armed, lets the next script run on the server and drops its
// reply, as a connection lost after the server ran it would. goredisadapter
// sends every script call in a pipeline, even alone.
type loseReply struct{ armed atomic.Bool }

func (h *loseReply) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *loseReply) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *loseReply) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if cmd.Err() == nil && strings.HasPrefix(cmd.Name(), "eval") && h.armed.CompareAndSwap(true, false) {
				cmd.SetErr(errLost)
				return errLost
			}
		}
		return err
	}
}

// remainingOf returns each limit's Remaining of a Result.
func remainingOf(res ratelimit.Result) []int64 {
	if res.Each == nil {
		return []int64{int64(res.Remaining)}
	}
	out := make([]int64, len(res.Each))
	for i, e := range res.Each {
		out[i] = int64(e.Remaining)
	}
	return out
}

// Random traces of reserve, commit (below, at and above the amount),
// cancel, retried settles, AllowN and expiry by the clock, on each
// algorithm and on a Policy of three, against the model: every answer of
// the server must be the model's, and the ledger (committed actuals,
// outstanding amounts, AllowN) must never exceed the log's or GCRA's
// limit. A refund that gave back more than the limit still counts, or a
// retried commit that charged again, parts the two.
func TestReservationsDisagreeWithTheModelOnRandomTraces(t *testing.T) {
	s := redistest.Start(t)
	rules := map[string]ratelimit.Rule{
		"log":     ratelimit.SlidingLog(12, time.Hour),
		"counter": ratelimit.SlidingCounter(12, time.Hour),
		"gcra":    ratelimit.GCRA(12, time.Hour, 12),
		"policy of three": ratelimit.Policy{
			ratelimit.SlidingLog(15, time.Hour), ratelimit.SlidingCounter(20, 2*time.Hour), ratelimit.GCRA(6, time.Hour, 10),
		},
	}
	traces, steps := 12, 120
	if testing.Short() {
		traces = 3
	}
	for name, rule := range rules {
		t.Run(name, func(t *testing.T) {
			ops := map[string]int{}
			for trace := range traces {
				seed := uint64(trace)*7919 + uint64(len(name))
				rng := rand.New(rand.NewPCG(seed, 17))
				clk := newClock(epoch)
				c, l := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now))
				var lose loseReply
				c.AddHook(&lose)
				key := fmt.Sprintf("%s-%d", name, trace)
				md := newModel(rule)
				burst := int64(math.MaxInt64)
				for _, m := range md.ls {
					burst = min(burst, m.cap)
				}
				var open []*ratelimit.Reservation
				ctx := context.Background()
				for step := range steps {
					where := fmt.Sprintf("trace %d (seed %d) step %d", trace, seed, step)
					if rng.IntN(3) == 0 {
						clk.Add(time.Duration(rng.IntN(12)) * 2 * time.Minute)
					}
					clock := clk.Now().UnixMicro()
					if debugTrace {
						t.Logf("%s clock %d open %d", where, clock, len(open))
					}
					switch op := rng.IntN(10); {
					case op < 4 || len(open) == 0:
						k := 1 + rng.Int64N(min(burst, 6))
						ttl := time.Duration(1+rng.IntN(8)) * 5 * time.Minute
						rs, err := l.Reserve(ctx, key, rule, int(k), ttl)
						if err != nil {
							t.Fatal(where, err)
						}
						var id string
						if rs.Result.Allowed {
							id = rs.ID
						}
						ok, rem := md.reserve(clock, k, ttl.Microseconds(), id)
						if debugTrace {
							t.Logf("  reserve %d ttl %v: %v %v id %s at %d", k, ttl, ok, rem, id, rs.At.UnixMicro())
						}
						if ok != rs.Result.Allowed || !slices.Equal(rem, remainingOf(rs.Result)) {
							t.Fatalf("%s: Reserve(%d): server %v %v, model %v %v", where, k, rs.Result.Allowed, remainingOf(rs.Result), ok, rem)
						}
						if ok {
							if got, want := rs.At.UnixMicro(), md.rsv[id].at; got != want {
								t.Fatalf("%s: reserved at %d, model %d", where, got, want)
							}
							open = append(open, rs)
							ops["reserve"]++
						} else {
							ops["reserve rejected"]++
						}
					case op < 8:
						i := rng.IntN(len(open))
						rs := open[i]
						cancel := op == 7
						actual := rng.Int64N(int64(rs.Amount) + 1)
						if rng.IntN(4) == 0 {
							actual = int64(rs.Amount) + 1 + rng.Int64N(3)
						}
						lost := rng.IntN(5) == 0
						lose.armed.Store(lost)
						var res ratelimit.Result
						var err error
						if cancel {
							res, err = rs.Cancel(ctx)
						} else {
							res, err = rs.Commit(ctx, int(actual))
						}
						status, charged, rem := md.settle(clock, rs.ID, rs.Expires.UnixMicro(), actual, cancel)
						if debugTrace {
							t.Logf("  settle %s cancel %v actual %d lost %v: server %v %v, model %d %d %v", rs.ID, cancel, actual, lost, res, err, status, charged, rem)
						}
						if lost {
							// The settle ran, its reply was lost: the
							// reservation stays open here and is settled
							// again later, by either method.
							if !errors.Is(err, errLost) {
								t.Fatalf("%s: settle with its reply lost: %v", where, err)
							}
							ops["reply lost"]++
							continue
						}
						switch {
						case status == 3 && !cancel:
							if !errors.Is(err, ratelimit.ErrExpired) {
								t.Fatalf("%s: commit past the expiry: %v, want ErrExpired", where, err)
							}
							ops["commit expired"]++
						case status == 1 && cancel, status == 2 && !cancel:
							if !errors.Is(err, ratelimit.ErrSettled) {
								t.Fatalf("%s: settled the other way before: %v, want ErrSettled", where, err)
							}
							ops["settled the other way"]++
						case err != nil:
							t.Fatalf("%s: settle: %v (model status %d)", where, err, status)
						default:
							if !cancel && int64(res.Granted) != charged || !slices.Equal(rem, remainingOf(res)) {
								t.Fatalf("%s: settle(%d, cancel %v): server granted %d %v, model %d %v (status %d)", where, actual, cancel, res.Granted, remainingOf(res), charged, rem, status)
							}
							ops[fmt.Sprintf("%s status %d", map[bool]string{true: "cancel", false: "commit"}[cancel], status)]++
						}
						open = slices.Delete(open, i, i+1)
					default:
						k := 1 + rng.Int64N(min(burst, 3))
						res, err := l.AllowN(ctx, key, rule, int(k))
						if err != nil {
							t.Fatal(where, err)
						}
						g, rem := md.decide(clock, k, "allow", "")
						if debugTrace {
							t.Logf("  allow %d: server %v %v, model %d %v", k, res.Allowed, remainingOf(res), g, rem)
						}
						if (g > 0) != res.Allowed || !slices.Equal(rem, remainingOf(res)) {
							t.Fatalf("%s: AllowN(%d): server %v %v, model %v %v", where, k, res.Allowed, remainingOf(res), g > 0, rem)
						}
						ops["allow"]++
					}
					if bad := md.exceeded(clock); bad != "" {
						t.Fatalf("%s: %s", where, bad)
					}
				}
			}
			t.Logf("%d traces of %d steps: %v", traces, steps, ops)
		})
	}
}
