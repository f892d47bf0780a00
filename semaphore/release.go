package semaphore

import (
	"context"
	_ "embed"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

//go:embed release.lua
var releaseSource string

var releaseScript = luascripts.New("semaphore/release.lua", releaseSource)

// Release gives the permit back if it is still live, and wakes the
// semaphore's AcquireWait callers at once. It reports false when the permit
// had expired or was released already: whatever the holder did since it
// expired was not protected by the semaphore, only by the token.
//
// A release whose connection failed after it was sent is not sent again
// by the client's retries, since it may have run (a second run would
// report false after releasing): it returns an error matching
// ErrReplyLost, and the permit is released or expires with its TTL.
func (s *Issuer) Release(ctx context.Context, p *Permit) (bool, error) {
	if err := checkPermit(p); err != nil {
		return false, err
	}
	start := time.Now()
	res, err := releaseScript.Run(ctx, s.client, []string{p.keys[0], p.keys[1], p.keys[3]}, p.ID).Int64Slice()
	e := Event{Op: OpRelease, Outcome: OutcomeReleased, Name: p.Name, Capacity: p.Capacity, PermitID: p.ID, Token: p.Token,
		Latency: time.Since(start), HeldFor: time.Since(p.acquiredAt)}
	released := err == nil && len(res) == 2 && res[0] == 1
	switch {
	case err != nil:
		err = netErr(ctx, "release", p.Name, err)
		e.Outcome, e.Err = OutcomeError, err
	case !released:
		e.Outcome = OutcomeNotHeld
	}
	if err == nil && len(res) == 2 {
		e.ServerTime = serverTime(res[1])
	}
	s.observe(ctx, e)
	return released, err
}
