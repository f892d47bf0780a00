package robustness

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// The tokens model: the fencing tokens a lock hands out. Every grant's
// token is above every token granted before it, which is what lets a
// fenced resource refuse an older holder. The default tokens (the larger
// of the counter + 1 and the server's clock in µs) keep that across a loss
// of the counter; WithCounterTokens documents that they do not: after a
// restart without persistence or a failover to a lagging replica, tokens
// restart lower and one already handed out is handed out again. The lenient
// form (with the losses) lets a token restart after a loss; a history legal
// only so is counted apart, as the documented non-guarantee.
//
// Its histories are the lock's granted acquires alone (the lock's other
// operations leave the tokens as they are), recorded apart for each token
// scheme, so that the default's are judged without any excuse.

// tokState is the highest token granted, or Lost after a loss: any token
// may come next.
type tokState struct {
	Max  int64
	Lost bool
}

// Tokens returns the tokens model.
func Tokens() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return tokState{} },
		Step: func(state, input, output any) (bool, any) {
			s := state.(tokState)
			switch in := input.(type) {
			case lossInput:
				return true, tokState{Max: s.Max, Lost: true}
			case Acquire:
				// Taking the loss as certain allows whatever not taking it
				// allows: a token above Max is above any lower mark too.
				return s.Lost || in.Token > s.Max, tokState{Max: in.Token}
			}
			panic(fmt.Sprintf("tokens: unexpected input %T", input))
		},
		DescribeOperation: func(input, output any) string {
			switch in := input.(type) {
			case lossInput:
				return "loss: " + in.Kind
			case Acquire:
				return fmt.Sprintf("acquire(%s) -> token %d", in.ID, in.Token)
			}
			return fmt.Sprint(input)
		},
		DescribeState: func(state any) string {
			s := state.(tokState)
			if s.Lost {
				return fmt.Sprintf("lost (highest before: %d)", s.Max)
			}
			return fmt.Sprintf("highest token %d", s.Max)
		},
	}
}

// reissued counts the tokens of a tokens history granted more than once.
func reissued(ops []porcupine.Operation) int {
	seen := map[int64]int{}
	n := 0
	for _, op := range ops {
		if in, ok := op.Input.(Acquire); ok {
			if seen[in.Token]++; seen[in.Token] == 2 {
				n++
			}
		}
	}
	return n
}
