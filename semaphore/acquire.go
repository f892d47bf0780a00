package semaphore

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/luascripts/leasecore"
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
// Capacity is per call, not stored (see the package doc). One call takes
// at most one permit, also when the client resends it; one whose reply
// never came gives back, in the background and by its own id, what it may
// have taken once the server answers again (see the package doc).
func (s *Issuer) Acquire(ctx context.Context, name string, capacity int, ttl time.Duration) (*Permit, error) {
	return s.acquire(ctx, name, capacity, ttl, false)
}

// acquire is Acquire; waiting marks a full semaphore so that its next
// release is published (AcquireWait, once subscribed).
func (s *Issuer) acquire(ctx context.Context, name string, capacity int, ttl time.Duration, waiting bool) (*Permit, error) {
	ttl, err := s.core().CheckCall(name, capacity, ttl)
	if err != nil {
		return nil, err
	}
	p := &Permit{Name: name, ID: newID(), Capacity: capacity, TTL: ttl, Owner: s.cfg.Owner, keys: s.cfg.keys(name)}
	args := []any{capacity, ttl.Milliseconds(), p.ID, p.Owner}
	if waiting {
		args = append(args, "w")
	}
	p.RequestedAt = time.Now()
	res, err := acquireScript.Run(ctx, s.cfg.Client, p.keys[:], args...).Int64Slice()
	e := leasecore.Event{Op: leasecore.OpAcquire, Outcome: leasecore.OutcomeError, Name: name, Capacity: capacity, Latency: time.Since(p.RequestedAt)}
	switch {
	case err != nil:
		if leasecore.NoReply(err) {
			s.cfg.GiveBack(ctx, p)
		}
		e.Err = errs.Call(ctx, "acquire", name, err)
		s.cfg.Report(ctx, e, nil)
		return nil, e.Err
	case len(res) == 2 && res[0] > 0:
		p.Token, p.Granted, p.acquiredAt = res[0], serverTime(res[1]), p.RequestedAt
		e.Outcome, e.ID, e.Token, e.ServerTime = leasecore.OutcomeAcquired, p.ID, p.Token, p.Granted
		s.cfg.Report(ctx, e, p)
		return p, nil
	case len(res) == 4 && res[0] == 0:
		full := &FullError{Name: name, Capacity: capacity, Holders: int(res[2]), Expires: time.Duration(res[3]) * time.Microsecond}
		e.Outcome, e.ServerTime, e.Holders, e.Err = outcomeFull, serverTime(res[1]), full.Holders, full
		s.cfg.Report(ctx, e, nil)
		return nil, full
	}
	return nil, fmt.Errorf("semaphore: acquire %q: unexpected reply %v", name, res)
}

// FullError is the error Acquire returns when no permit is free. It
// describes the semaphore as the refusing script saw it.
type FullError struct {
	Name string
	// Capacity is the capacity the refused call asked for.
	Capacity int
	// Holders is how many live permits there were: at least Capacity.
	Holders int
	// Expires is how long until the earliest live permit expires: the
	// longest a waiter must wait for a crashed holder.
	Expires time.Duration
}

func (e *FullError) Error() string {
	return fmt.Sprintf("%s: %q (%d live, capacity %d, the first expires in %v)", ErrFull, e.Name, e.Holders, e.Capacity, e.Expires)
}

// Is makes errors.Is(err, ErrFull) true.
func (e *FullError) Is(target error) bool { return target == ErrFull }
