package robustness

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// The holders model: a lock (capacity 1) or a semaphore (capacity N) as the
// set of leases the server holds, each with its expiry on the server's
// clock. The servers run on this host, so the wall clock is their clock: a
// call executed somewhere in [Call, Return], and a lease granted by it
// expires TTL after that, within [Call+TTL, Return+TTL], or exactly at
// Granted+TTL when the reply carries the server's time (a semaphore
// permit).
//
// The guarantee is judged where it is made: a holder within its lease. A
// grant is illegal when capacity other leases were certainly alive at every
// instant the grant could have run; a refusal is illegal when fewer than
// capacity could have been alive at any instant it could have run. A lease
// whose holder went on past its deadline (a paused client) is no longer
// counted once it has certainly expired: the lock cannot stop such a holder,
// only the fence can (register.go).

// Acquire is one attempt to take a lease (or permit) ID for TTL.
type Acquire struct {
	ID  string
	TTL time.Duration
	// Granted is the server's time of the grant in µs when the reply
	// carries it, else 0.
	Granted int64
	// Token is the fencing token of a granted lease (tokens.go), else 0.
	Token int64
	// Call and Return are the operation's interval, repeated here for the
	// model, which judges leases by time (Return is pending when unknown,
	// until History.Ops sets it to the last instant it could take effect).
	Call, Return int64
}

// moveInput is a Cluster slot migration between Start and End (µs): a
// lease the server holds may outlive its TTL by up to End - Start, since
// MIGRATE gives a moved key its remaining TTL anew on the importing node.
type moveInput struct{ Start, End int64 }

// Release is one release of lease ID.
type Release struct {
	ID           string
	Call, Return int64
}

// slack covers the servers' millisecond expiry: a key set with PX at t ms
// expires after t+ttl, rounded to the millisecond.
const slack = 2 * time.Millisecond

type holder struct {
	ID     string
	Lo, Hi int64 // bounds of the lease's expiry on the server, µs
}

// holdState is the set of leases the server may hold, sorted by id, and
// whether a refusal can still be judged.
type holdState struct {
	Leases []holder
	// Excused is set by an acquire of unknown outcome: it may have taken a
	// place at any instant up to its Return (the last instant it could take
	// effect, history.go's unknownBound), so a refusal is not judged until
	// that place has certainly expired; grants still are. A loss sets it
	// too: it may bring back a lease already released, until that lease
	// expires.
	Excused int64
	// TTL is the longest TTL acquired so far (µs).
	TTL int64
}

func (s holdState) without(id string) holdState {
	s.Leases = slices.DeleteFunc(slices.Clone(s.Leases), func(h holder) bool { return h.ID == id })
	return s
}

func (s holdState) with(h holder) holdState {
	s = s.without(h.ID)
	s.Leases = append(s.Leases, h)
	slices.SortFunc(s.Leases, func(a, b holder) int { return strings.Compare(a.ID, b.ID) })
	return s
}

// uncertain keeps lease id (or every lease, for "") but no longer counts it
// as certainly alive: it may be gone.
func (s holdState) uncertain(id string) holdState {
	s.Leases = slices.Clone(s.Leases)
	for i := range s.Leases {
		if id == "" || s.Leases[i].ID == id {
			s.Leases[i].Lo = 0
		}
	}
	return s
}

// expired drops the leases certainly expired before t.
func (s holdState) expired(t int64) holdState {
	s.Leases = slices.DeleteFunc(slices.Clone(s.Leases), func(h holder) bool { return !h.mayLive(t) })
	return s
}

// mayLive reports whether the lease may still be alive at t.
func (h holder) mayLive(t int64) bool { return h.Hi == pending || h.Hi+slack.Microseconds() > t }

// Holders returns the holders model for a capacity.
//
// An operation of unknown outcome is both applied and not. Rather than
// branch, the model takes the one state that allows everything either
// branch allows, so that the checker's search stays linear in the
// history: an unknown release (and a loss) leaves the lease to be counted
// as possibly alive but never as certainly alive; an unknown acquire adds
// no lease a grant would be judged against, and excuses every refusal
// until the lease it may have taken has certainly expired.
func Holders(capacity int) porcupine.Model {
	sl := slack.Microseconds()
	return porcupine.Model{
		Init: func() any { return holdState{} },
		Step: func(state, input, output any) (bool, any) {
			s := state.(holdState)
			switch in := input.(type) {
			case moveInput:
				s.Leases = slices.Clone(s.Leases)
				for i := range s.Leases {
					if s.Leases[i].Hi != pending {
						s.Leases[i].Hi += in.End - in.Start
					}
				}
				return true, s
			case lossInput:
				// The server may be back in any earlier state: a lease
				// released before the loss (a release only the old primary
				// saw) may live again, until at most a TTL after the loss.
				s = s.uncertain("")
				s.Excused = max(s.Excused, in.End+s.TTL)
				return true, s
			case Acquire:
				s = s.expired(in.Call)
				lo, hi := in.Call, in.Return
				if in.Granted > 0 {
					lo, hi = in.Granted, in.Granted
				}
				ttl := in.TTL.Microseconds()
				s.TTL = max(s.TTL, ttl)
				switch output.(Outcome) {
				case Accepted:
					certain := 0
					for _, h := range s.Leases {
						if h.ID != in.ID && h.Lo-sl > in.Return {
							certain++
						}
					}
					return certain < capacity, s.with(holder{ID: in.ID, Lo: lo + ttl, Hi: hi + ttl})
				case Refused:
					possible := 0
					for _, h := range s.Leases {
						if h.mayLive(in.Call) {
							possible++
						}
					}
					return in.Call < s.Excused+sl || possible >= capacity, s
				default:
					s.Excused = max(s.Excused, in.Return+ttl)
					return true, s
				}
			case Release:
				s = s.expired(in.Call)
				i := slices.IndexFunc(s.Leases, func(h holder) bool { return h.ID == in.ID })
				switch output.(Outcome) {
				case Accepted:
					return i >= 0, s.without(in.ID)
				case Refused:
					// Its own lease, certainly alive, not found: illegal.
					return i < 0 || s.Leases[i].Lo-sl <= in.Return, s.without(in.ID)
				default:
					return true, s.uncertain(in.ID)
				}
			}
			panic(fmt.Sprintf("holders: unexpected input %T", input))
		},
		Equal: func(a, b any) bool {
			x, y := a.(holdState), b.(holdState)
			return x.Excused == y.Excused && x.TTL == y.TTL && slices.Equal(x.Leases, y.Leases)
		},
		DescribeOperation: func(input, output any) string {
			switch in := input.(type) {
			case lossInput:
				return "loss: " + in.Kind
			case moveInput:
				return fmt.Sprintf("slot migration (leases may live %v longer)", time.Duration(in.End-in.Start)*time.Microsecond)
			case Acquire:
				return fmt.Sprintf("acquire(%s, ttl %v) -> %v", in.ID, in.TTL, output.(Outcome))
			case Release:
				return fmt.Sprintf("release(%s) -> %v", in.ID, output.(Outcome))
			}
			return fmt.Sprint(input)
		},
		DescribeState: func(state any) string {
			var b strings.Builder
			s := state.(holdState)
			if s.Excused > 0 {
				fmt.Fprintf(&b, "(refusals excused until %s) ", time.UnixMicro(s.Excused).Format("15:04:05.000000"))
			}
			for _, h := range s.Leases {
				hi := "unknown"
				if h.Hi != pending {
					hi = time.UnixMicro(h.Hi).Format("15:04:05.000000")
				}
				fmt.Fprintf(&b, "%s until %s..%s; ", h.ID, time.UnixMicro(h.Lo).Format("15:04:05.000000"), hi)
			}
			return b.String()
		},
	}
}

// early cuts the interval of every acquire and release of unknown outcome
// to its call. In this model such an operation only ever allows more (an
// excuse for refusals, lasting until its input's Return plus its TTL; a
// lease no longer certainly alive), so taking it as early as it can be is
// never worse than taking it later, and the verdict is the same. Left
// pending until its bound, it stays concurrent with every operation made
// meanwhile: during a failover a client whose calls fail at once (no
// primary to connect to) leaves hundreds, and the search is exponential in
// them.
func early(ops []porcupine.Operation) []porcupine.Operation {
	for i, op := range ops {
		switch op.Input.(type) {
		case Acquire, Release:
			if op.Output == Unknown {
				ops[i].Return = op.Call + 1
			}
		}
	}
	return ops
}
