package ratelimit

import "context"

// Reset forgets what key has used under r (a Limit or a Policy): the next
// call starts with the full allowance. It deletes the state of each of r's
// limits (see "Keys" in the package documentation) in one DEL, and nothing
// else: the key's other rules keep theirs. A deny cache in another process
// (WithDenyCache) keeps answering a rejection it holds until its
// RetryAfter; this Limiter's own cache forgets every entry of key at once,
// under any rule.
//
// Changing a limit's parameters changes its key, so a deploy that changes
// a limit starts every caller afresh by default. To carry the quotas over
// instead, keep the old Limit value for as long as its window (the old
// keys expire by then): that is, keep the parameters; there is no
// conversion of one algorithm's or parameter set's state into another's.
func (l *Limiter) Reset(ctx context.Context, key string, r Rule) error {
	_, _, err := l.decide(ctx, call{m: modeReset, key: key, rule: r, n: 1})
	return err
}
