package semaphore

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

//go:embed extend.lua
var extendSource string

// Idempotent: running it twice sets the same expiry, counted from the
// later run.
var extendScript = luascripts.NewIdempotent("semaphore/extend.lua", extendSource)

// Extend sets the permit's TTL to ttl, counted from now, if and only if the
// permit is still live; an expired permit is never brought back, even when
// no acquire has dropped it yet, and Extend returns ErrNotHeld. On success
// it sets p.TTL and p.RequestedAt (when the extend was sent).
func (s *Issuer) Extend(ctx context.Context, p *Permit, ttl time.Duration) error {
	return s.core().Extend(ctx, p, ttl)
}

// extendScript runs extend.lua for p without changing p: a Keeper's
// renewals run it from their own goroutine.
func (s *Issuer) extendScript(ctx context.Context, p *Permit, ttl time.Duration) (time.Time, error) {
	res, err := extendScript.Run(ctx, s.cfg.Client, p.heldKeys(), p.ID, ttl.Milliseconds()).Int64Slice()
	switch {
	case err != nil:
		return time.Time{}, errs.Call(ctx, "extend", p.Name, err)
	case len(res) != 2:
		return time.Time{}, fmt.Errorf("semaphore: extend %q: unexpected reply %v", p.Name, res)
	case res[0] != 1:
		return serverTime(res[1]), errs.NotHeldError(p.Name, p.Token)
	}
	return serverTime(res[1]), nil
}
