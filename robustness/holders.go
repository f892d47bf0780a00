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
	// Call and Return are the operation's interval, repeated here for the
	// model, which judges leases by time (Return is pending when unknown).
	Call, Return int64
}

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
	// place at any later instant (a frozen server runs it when it wakes),
	// so from then on a refusal is not judged; grants still are.
	Excused bool
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
// no lease a grant would be judged against, and excuses every later
// refusal.
func Holders(capacity int) porcupine.Model {
	sl := slack.Microseconds()
	return porcupine.Model{
		Init: func() any { return holdState{} },
		Step: func(state, input, output any) (bool, any) {
			s := state.(holdState)
			switch in := input.(type) {
			case lossInput:
				return true, s.uncertain("")
			case Acquire:
				s = s.expired(in.Call)
				lo, hi := in.Call, in.Return
				if in.Granted > 0 {
					lo, hi = in.Granted, in.Granted
				}
				ttl := in.TTL.Microseconds()
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
					return s.Excused || possible >= capacity, s
				default:
					s.Excused = true
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
			return x.Excused == y.Excused && slices.Equal(x.Leases, y.Leases)
		},
		DescribeOperation: func(input, output any) string {
			switch in := input.(type) {
			case lossInput:
				return "loss: " + in.Kind
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
			if s.Excused {
				b.WriteString("(refusals excused) ")
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
