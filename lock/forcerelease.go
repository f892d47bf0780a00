package lock

import (
	"context"
	_ "embed"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/luascripts/leasecore"
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
	if err := l.core().CheckName(name); err != nil {
		return false, err
	}
	start := time.Now()
	n, err := forceReleaseScript.Run(ctx, l.cfg.Client, []string{l.cfg.lockKey(name)}).Int()
	if err != nil {
		err = errs.Call(ctx, "force release", name, err)
	}
	if l.cfg.On() {
		e := leasecore.Event{Op: opForceRelease, Outcome: leasecore.OutcomeReleased, Name: name, Latency: time.Since(start), Err: err}
		switch {
		case err != nil:
			e.Outcome = leasecore.OutcomeError
		case n != 1:
			e.Outcome = leasecore.OutcomeNotHeld
		}
		l.cfg.Report(ctx, e, nil)
	}
	return err == nil && n == 1, err
}
