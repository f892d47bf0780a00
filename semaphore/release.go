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
	return s.core().Release(ctx, p)
}

// releaseScript runs release.lua for p: it removes p by its id alone.
func (s *Issuer) releaseScript(ctx context.Context, p *Permit) (bool, time.Time, error) {
	res, err := releaseScript.Run(ctx, s.cfg.Client, p.heldKeys(), p.ID).Int64Slice()
	if err != nil || len(res) != 2 {
		return false, time.Time{}, err
	}
	return res[0] == 1, serverTime(res[1]), nil
}
