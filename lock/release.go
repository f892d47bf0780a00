package lock

import (
	"context"
	_ "embed"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

//go:embed release.lua
var releaseSource string

var releaseScript = luascripts.New("lock/release.lua", releaseSource)

// Release deletes the lock if, and only if, lease still holds it. It reports
// false when the lock was already gone or someone else's: the lease had
// been lost, and whatever the caller did since it was lost was not
// protected by the lock (only by the fencing token). A release wakes the
// name's AcquireWait callers at once.
//
// A release whose connection failed after it was sent is not sent again by
// the client, since it may have run (a second run would report false
// after releasing): it returns an error matching ErrReplyLost, and the
// lock is released or expires with its TTL.
func (l *Locker) Release(ctx context.Context, lease *Lease) (bool, error) {
	return l.core().Release(ctx, lease)
}

// releaseScript runs release.lua for lease: compare-and-delete.
func (l *Locker) releaseScript(ctx context.Context, lease *Lease) (bool, time.Time, error) {
	n, err := l.run(ctx, lease.Name, releaseScript, lease.keys[:1], lease.value).Int()
	return err == nil && n == 1, time.Time{}, err
}
