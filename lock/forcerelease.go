package lock

import (
	"context"
	_ "embed"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
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
	start := time.Now()
	n, err := forceReleaseScript.Run(ctx, l.client, []string{l.cfg.lockKey(name)}).Int()
	if err != nil {
		err = wrap(ctx, "force release", name, err)
	}
	if l.cfg.on() {
		e := Event{Op: OpForceRelease, Outcome: OutcomeReleased, Name: name, Latency: time.Since(start), Err: err}
		switch {
		case err != nil:
			e.Outcome = OutcomeError
		case n != 1:
			e.Outcome = OutcomeNotHeld
		}
		l.cfg.observe(ctx, e)
	}
	return err == nil && n == 1, err
}
