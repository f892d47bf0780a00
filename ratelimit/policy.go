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

// Validate reports, without a round trip, whether every call with p would
// be refused as input: an empty policy, an invalid limit, or one limit
// twice. Configuration code calls it so that a policy that can never work
// fails at start-up, not on every request.
func (p Policy) Validate() error { return validatePolicy(p, 1) }

// validateLimit checks l and that n fits it.
func validateLimit(l Limit, n int) error {
	if err := l.validate(); err != nil {
		return err
	}
	if n > l.Burst() {
		return fmt.Errorf("%w: %d is more than %v can ever admit at once (%d)", ErrInvalidN, n, l, l.Burst())
	}
	if n <= 0 {
		return fmt.Errorf("%w: %d, must be positive", ErrInvalidN, n)
	}
	return nil
}

// validatePolicy checks every limit of p, that none appears twice and that
// n fits all of them.
func validatePolicy(p Policy, n int) error {
	if len(p) == 0 {
		return fmt.Errorf("%w: empty policy", ErrInvalidLimit)
	}
	for i, l := range p {
		if err := l.validate(); err != nil {
			return err
		}
		// Policies are short: a quadratic scan allocates nothing.
		for _, o := range p[:i] {
			if o.id == l.id {
				return fmt.Errorf("%w: %v appears twice in the policy and would count every request twice", ErrInvalidLimit, l)
			}
		}
		if n > l.Burst() {
			return fmt.Errorf("%w: %d is more than %v can ever admit at once (%d)", ErrInvalidN, n, l, l.Burst())
		}
	}
	if n <= 0 {
		return fmt.Errorf("%w: %d, must be positive", ErrInvalidN, n)
	}
	return nil
}
