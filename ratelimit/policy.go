package ratelimit

import "fmt"

// A Rule is what a Limiter enforces on a key: a single Limit or a Policy.
type Rule interface {
	limits() []Limit
}

func (l Limit) limits() []Limit { return []Limit{l} }

// A Policy is several limits on one key, such as 10 per second and 1000
// per day, checked and consumed in one atomic script: a request is admitted
// only if every limit admits it, and then every limit counts it; when any
// limit rejects, none counts it. Result.Limit says which limit bound.
type Policy []Limit

func (p Policy) limits() []Limit { return p }

// validateRule checks every limit of r and that n fits all of them.
func validateRule(r Rule, n int) ([]Limit, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: nil rule", ErrInvalidLimit)
	}
	ls := r.limits()
	if len(ls) == 0 {
		return nil, fmt.Errorf("%w: empty policy", ErrInvalidLimit)
	}
	seen := make(map[string]bool, len(ls))
	for _, l := range ls {
		if err := l.validate(); err != nil {
			return nil, err
		}
		if seen[l.id()] {
			return nil, fmt.Errorf("%w: %v appears twice in the policy and would count every request twice", ErrInvalidLimit, l)
		}
		seen[l.id()] = true
		if n > l.Burst() {
			return nil, fmt.Errorf("%w: %d is more than %v can ever admit at once (%d)", ErrInvalidN, n, l, l.Burst())
		}
	}
	if n <= 0 {
		return nil, fmt.Errorf("%w: %d, must be positive", ErrInvalidN, n)
	}
	return ls, nil
}
