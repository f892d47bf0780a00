package ratelimit

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/redis-primitives/go/luascripts"
)

//go:embed reset.lua
var resetSource string

// resetScript deletes a rule's keys: reset.lua, called by Reset below.
var resetScript = func() *luascripts.Script {
	s := luascripts.New("reset.lua", resetSource)
	allScripts = append(allScripts, s)
	return s
}()

// Reset forgets what key has used under r (a Limit or a Policy): the next
// call starts with the full allowance. It deletes the state of each of r's
// limits (see "Keys" in the package documentation) in one DEL, and nothing
// else: the key's other rules keep theirs. A deny cache in another process
// (WithDenyCache) keeps answering a rejection it holds until its
// RetryAfter; this Limiter's own cache forgets key's entry for r at once.
//
// Changing a limit's parameters changes its key, so a deploy that changes
// a limit starts every caller afresh by default. To carry the quotas over
// instead, keep the old Limit value for as long as its window (the old
// keys expire by then): that is, keep the parameters; there is no
// conversion of one algorithm's or parameter set's state into another's.
func (l *Limiter) Reset(ctx context.Context, key string, r Rule) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if err := validateRule(r); err != nil {
		return err
	}
	b := base(l.cfg.prefix, key)
	lims := r.limits()
	keys := make([]string, len(lims))
	for i, lim := range lims {
		keys[i] = b + lim.id
	}
	if l.deny != nil {
		l.deny.forget(denyID(key, r))
	}
	if err := resetScript.Run(ctx, l.client, keys).Err(); err != nil {
		return l.callError(ctx, "reset", key, err)
	}
	return nil
}

// validateRule checks r without an n.
func validateRule(r Rule) error {
	switch r := r.(type) {
	case Limit:
		return r.validate()
	case Policy:
		return validatePolicy(r, 1)
	}
	return fmt.Errorf("%w: nil rule", ErrInvalidLimit)
}
