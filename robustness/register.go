package robustness

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// The register model: a fenced key. A write carries a token; the resource
// accepts it when the token is at least the highest it accepted before and
// refuses it otherwise; a read returns the value of the last accepted write.
// A refusal is checked as strictly as an acceptance, so a fence that refuses
// a current writer is caught as well as one that lets a stale writer in.

// Write is a fenced write of Value with Token.
type Write struct {
	Token int64
	Value string
	// Late marks a write its holder made past its lease's local deadline
	// (a paused client): the documented non-guarantee the model classifies.
	Late bool
}

// Read is a plain read of the key.
type Read struct{}

// Outcome is an operation's result.
type Outcome int

const (
	// Unknown is a timeout or a lost reply: applied and not.
	Unknown Outcome = iota
	// Accepted is a write that landed, an acquire that was granted, a
	// release that deleted the holder's own lease.
	Accepted
	// Refused is a stale write refused, an acquire refused as full, a
	// release that found the lease gone.
	Refused
)

func (o Outcome) String() string {
	switch o {
	case Accepted:
		return "ok"
	case Refused:
		return "refused"
	}
	return "unknown"
}

// ReadResult is a read's result: the value, "" for a missing key.
type ReadResult struct {
	Value   string
	Outcome Outcome // Accepted, or Unknown when the read failed
}

// regState is the register: the highest accepted token and the last
// accepted value. Lost is set by a loss event (in the lenient form): the
// server may then hold any earlier state, so up to the next accepted write,
// a write is accepted whatever its token, refused only if an earlier mark
// could exceed it, and a read may see anything.
type regState struct {
	Token int64
	Value string
	Lost  bool
	Max   int64 // the highest token accepted before the loss
}

// Register returns the register model.
func Register() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{regState{}} },
		Step: func(state, input, output any) []any {
			s := state.(regState)
			switch in := input.(type) {
			case lossInput:
				return []any{s, regState{Lost: true, Max: max(s.Token, s.Max)}}
			case Write:
				out := output.(Outcome)
				landed := regState{Token: in.Token, Value: in.Value}
				switch out {
				case Accepted:
					if s.Lost || in.Token >= s.Token {
						return []any{landed}
					}
				case Refused:
					if (!s.Lost && in.Token < s.Token) || (s.Lost && in.Token < max(s.Max, s.Token)) {
						return []any{s}
					}
				default:
					if s.Lost || in.Token >= s.Token {
						return []any{s, landed}
					}
					return []any{s}
				}
				return nil
			case Read:
				out := output.(ReadResult)
				if out.Outcome == Unknown || s.Lost || out.Value == s.Value {
					return []any{s}
				}
				return nil
			}
			panic(fmt.Sprintf("register: unexpected input %T", input))
		},
		DescribeOperation: func(input, output any) string {
			switch in := input.(type) {
			case lossInput:
				return "loss: " + in.Kind
			case Write:
				late := ""
				if in.Late {
					late = " past its deadline"
				}
				return fmt.Sprintf("write(%q, token %d%s) -> %v", in.Value, in.Token, late, output.(Outcome))
			case Read:
				out := output.(ReadResult)
				if out.Outcome == Unknown {
					return "read() -> unknown"
				}
				return fmt.Sprintf("read() -> %q", out.Value)
			}
			return fmt.Sprint(input)
		},
		DescribeState: func(state any) string {
			s := state.(regState)
			if s.Lost {
				return fmt.Sprintf("lost (highest before: %d)", max(s.Max, s.Token))
			}
			return fmt.Sprintf("token %d, value %q", s.Token, s.Value)
		},
	}
	return nm.ToModel()
}
