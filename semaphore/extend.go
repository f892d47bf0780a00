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
	if err := checkPermit(p); err != nil {
		return err
	}
	if ttl < time.Millisecond {
		return fmt.Errorf("%w: %v (want ≥ 1ms)", ErrInvalidTTL, ttl)
	}
	ttl = ttl.Truncate(time.Millisecond)
	sent := time.Now()
	if err := s.extend(ctx, p, ttl); err != nil {
		return err
	}
	p.TTL, p.RequestedAt = ttl, sent
	return nil
}

// extend runs extend.lua for p without changing p: WithPermit's renewals
// run it from their own goroutine.
func (s *Issuer) extend(ctx context.Context, p *Permit, ttl time.Duration) error {
	start := time.Now()
	res, err := extendScript.Run(ctx, s.client, []string{p.keys[0], p.keys[1], p.keys[3]}, p.ID, ttl.Milliseconds()).Int64Slice()
	e := Event{Op: OpExtend, Outcome: OutcomeOK, Name: p.Name, Capacity: p.Capacity, PermitID: p.ID, Token: p.Token, Latency: time.Since(start)}
	switch {
	case err != nil:
		err = netErr(ctx, "extend", p.Name, err)
		e.Outcome = OutcomeError
	case len(res) != 2:
		err = fmt.Errorf("semaphore: extend %q: unexpected reply %v", p.Name, res)
		e.Outcome = OutcomeError
	case res[0] != 1:
		err = fmt.Errorf("%w: %q (token %d)", ErrNotHeld, p.Name, p.Token)
		e.Outcome = OutcomeNotHeld
	}
	if err == nil || e.Outcome == OutcomeNotHeld {
		e.ServerTime = serverTime(res[1])
	}
	e.Err = err
	s.observe(ctx, e)
	return err
}
