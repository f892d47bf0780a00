package ratelimittest

import (
	"fmt"

	"github.com/redis-primitives/go/ratelimit"
)

// check is ratelimit's check of a call's input, with its errors word for
// word: the key, the rule, then limit by limit its validity, a repeat and
// n against its Burst, and last n itself. Each limit's validity and
// repeats are ratelimit's own Policy.Validate on the limits up to it.
func check(key string, r ratelimit.Rule, n int) ([]ratelimit.Limit, error) {
	if key == "" {
		return nil, fmt.Errorf("%w: empty key", ratelimit.ErrInvalidKey)
	}
	var lims []ratelimit.Limit
	switch r := r.(type) {
	case ratelimit.Limit:
		lims = []ratelimit.Limit{r}
	case ratelimit.Policy:
		lims = r
	default:
		return nil, fmt.Errorf("%w: nil rule", ratelimit.ErrInvalidLimit)
	}
	if len(lims) == 0 {
		return nil, fmt.Errorf("%w: empty policy", ratelimit.ErrInvalidLimit)
	}
	for i, lim := range lims {
		if err := ratelimit.Policy(lims[:i+1]).Validate(); err != nil {
			return nil, err
		}
		if n > lim.Burst() {
			return nil, fmt.Errorf("%w: %d is more than %v can ever admit at once (%d)", ratelimit.ErrInvalidN, n, lim, lim.Burst())
		}
		if err := charges(lim, n); err != nil {
			return nil, err
		}
	}
	if n <= 0 {
		return nil, fmt.Errorf("%w: %d, must be positive", ratelimit.ErrInvalidN, n)
	}
	return lims, nil
}

// charges is ratelimit's check that one call may charge n requests to lim
// (see ratelimit.MaxLogCharge).
func charges(lim ratelimit.Limit, n int) error {
	if lim.Algorithm() == ratelimit.AlgorithmSlidingLog && n > ratelimit.MaxLogCharge {
		return fmt.Errorf("%w: %d is more than one call may charge to %v (%d: one member each, written while Redis runs nothing else)", ratelimit.ErrInvalidN, n, lim, ratelimit.MaxLogCharge)
	}
	return nil
}
