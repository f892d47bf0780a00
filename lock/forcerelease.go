package lock

import (
	"context"
	_ "embed"

	"github.com/redis-primitives/go/luascripts"
)

//go:embed forcerelease.lua
var forceReleaseSource string

var forceReleaseScript = luascripts.New("lock/forcerelease.lua", forceReleaseSource)

// ForceRelease deletes the lock called name whoever holds it, for an
// operator clearing a lock by hand, and wakes the name's AcquireWait
// callers. It reports whether there was a lock to delete. The counter is
// kept, so the next token is still above every earlier one.
//
// The old holder is not told and keeps running: its renewals fail with
// ErrNotHeld (a Keeper then cancels its context), but until then it may
// still act. Its token is what stops it: once the next holder has written
// with a higher token, a fence refuses the old holder's writes.
func (l *Locker) ForceRelease(ctx context.Context, name string) (bool, error) {
	if err := checkName(name); err != nil {
		return false, err
	}
	n, err := forceReleaseScript.Run(ctx, l.client, []string{l.cfg.lockKey(name)}).Int()
	if err != nil {
		return false, wrap(ctx, "force release", name, err)
	}
	return n == 1, nil
}
