package ratelimit

import (
	"context"
	_ "embed"
	"fmt"
)

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

//go:embed policy.lua
var policySource string

// policyScripts decide on a Policy: policy.lua, whose arguments and reply
// are built and read by decidePolicy below.
var policyScripts = newScriptPair("policy.lua", policySource)

// callPolicy runs policy.lua: KEYS one per limit; ARGV n, mode, pinned
// time, then per limit its letter and its capacity and two numbers
// packed; reply granted, allowed, then per limit: allowed, remaining,
// retry-after µs, reset-after µs, packed, read by decodePolicy.
func (l *Limiter) callPolicy(ctx context.Context, m mode, key string, p Policy, n int, pinned string) ([]int64, error) {
	b := base(l.cfg.prefix, key)
	keys := make([]string, len(p))
	args := make([]any, 0, 3+len(p))
	args = append(args, n, m.arg(), pinned)
	for i, lim := range p {
		keys[i] = b + lim.id
		args = append(args, lim.inPolicy)
	}
	packed, err := l.script(ctx, key, policyScripts.pick(m), keys, args...).Text()
	if err != nil {
		return nil, l.callError(ctx, m, key, err)
	}
	reply, ok := decodeInts(packed, 2+4*len(p))
	if !ok {
		return nil, fmt.Errorf("ratelimit: %s on %q: unexpected reply %q", m, key, packed)
	}
	return reply, nil
}

// decodePolicy turns callPolicy's reply into a Result: the binding
// limit's, with every limit's in Each.
func decodePolicy(p Policy, reply []int64) Result {
	granted, allowed := int(reply[0]), reply[1] == 1
	each := make([]Result, len(p))
	bind := 0
	for i := range p {
		j := 2 + 4*i
		each[i] = Result{
			Allowed:    reply[j] == 1,
			Limit:      p[i],
			Granted:    granted,
			Remaining:  int(reply[j+1]),
			RetryAfter: ceilMillis(reply[j+2]),
			ResetAfter: ceilMillis(reply[j+3]),
		}
		// The binding limit: when allowed, the one with the fewest left;
		// when rejected, the one to wait for longest.
		b := each[bind]
		if allowed {
			if each[i].Remaining < b.Remaining {
				bind = i
			}
		} else if !each[i].Allowed && (b.Allowed || each[i].RetryAfter > b.RetryAfter) {
			bind = i
		}
	}
	res := each[bind]
	res.Each = each
	res.Allowed = allowed
	if allowed {
		res.RetryAfter = 0
	}
	return res
}
