package semaphore

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

//go:embed acquire.lua
var acquireSource string

// Idempotent: a resend finds its own permit by id (see acquire.lua), so
// the client may send it again as it sends any command again.
var acquireScript = luascripts.NewIdempotent("semaphore/acquire.lua", acquireSource)

// Acquire makes one attempt to take a permit of the semaphore called name,
// which admits capacity live permits, for ttl. On success the permit's
// token is larger than every token the semaphore granted before. When
// capacity permits are live it returns a *FullError, which matches ErrFull
// and says when the first of them expires. It does not wait; see
// AcquireWait.
//
// Capacity is per call, not stored: a call with a lower capacity than the
// live permits is refused until enough of them are released or expire;
// holders above it keep their permits.
//
// The permit's id is chosen here before the call is sent, so when the
// client resends a script whose reply it lost, the resend finds the permit
// the first send granted and returns it: one call takes at most one permit.
//
// An Acquire that got no reply (its context ended, the connection was lost)
// may still run on the server after it returned: a frozen or slow server
// runs the queued script when it wakes. The Issuer then gives that permit
// back, in the background and by its own id, once the server answers again
// (within the TTL of the attempt; a permit taken later still expires with
// its TTL). It never touches another holder's permit.
func (s *Issuer) Acquire(ctx context.Context, name string, capacity int, ttl time.Duration) (*Permit, error) {
	return s.acquire(ctx, name, capacity, ttl, false)
}

// acquire is Acquire; waiting marks a full semaphore so that its next
// release is published (AcquireWait, once subscribed).
func (s *Issuer) acquire(ctx context.Context, name string, capacity int, ttl time.Duration, waiting bool) (*Permit, error) {
	ttl, err := checkCall(name, capacity, ttl)
	if err != nil {
		return nil, err
	}
	p := &Permit{Name: name, ID: newID(), Capacity: capacity, TTL: ttl, Owner: s.cfg.owner, keys: s.cfg.keys(name)}
	args := []any{capacity, ttl.Milliseconds(), p.ID, p.Owner}
	if waiting {
		args = append(args, "w")
	}
	p.RequestedAt = time.Now()
	res, err := acquireScript.Run(ctx, s.client, p.keys[:], args...).Int64Slice()
	if err != nil {
		if unanswered(err) {
			s.reclaim(p)
		}
		err = netErr(ctx, "acquire", name, err)
		s.observe(ctx, Event{Op: OpAcquire, Outcome: OutcomeError, Name: name, Capacity: capacity, Latency: time.Since(p.RequestedAt), Err: err})
		return nil, err
	}
	e := Event{Op: OpAcquire, Outcome: OutcomeAcquired, Name: name, Capacity: capacity, Latency: time.Since(p.RequestedAt)}
	switch {
	case len(res) == 2 && res[0] > 0:
		p.Token, p.Granted, p.acquiredAt = res[0], serverTime(res[1]), p.RequestedAt
		e.PermitID, e.Token, e.ServerTime = p.ID, p.Token, p.Granted
		s.observe(ctx, e)
		return p, nil
	case len(res) == 4 && res[0] == 0:
		full := &FullError{Name: name, Capacity: capacity, Holders: int(res[2]), Expires: time.Duration(res[3]) * time.Microsecond}
		e.Outcome, e.ServerTime, e.Holders, e.Err = OutcomeFull, serverTime(res[1]), full.Holders, full
		s.observe(ctx, e)
		return nil, full
	}
	return nil, fmt.Errorf("semaphore: acquire %q: unexpected reply %v", name, res)
}
