package lock

import (
	"context"
	"errors"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// noReply reports whether err says an acquire got no reply, so the script
// may have run, or may still run once a frozen or slow server wakes: a
// timeout, a lost connection. A server's error reply (a
// luascripts.ReplyError) says it did not, and a closed client sent
// nothing.
func noReply(err error) bool {
	if err == nil || errors.Is(err, luascripts.ErrClosed) {
		return false
	}
	_, replied := luascripts.ReplyMessage(err)
	return !replied
}

// cleanUp releases, best effort and in the background, the lock that an
// acquire whose reply never came may have set for lease: by lease's own id
// (release.lua's compare-and-delete), so never another holder's lock. It
// sends the release until the server answers it twice: the second release
// is sent after the first's reply, when the server has woken and run every
// command it had queued, the lost acquire included. It gives up on a
// closed client, on the server's error, and once lease's TTL has passed
// since the acquire was sent: a lock set by an acquire that ran later still
// expires with its TTL. The goroutine ends then at the latest (plus one
// call's ReadTimeout for a go-redis client without ContextTimeoutEnabled).
func (l *Locker) cleanUp(lease *Lease) {
	ctx, cancel := context.WithDeadline(context.Background(), lease.RequestedAt.Add(lease.TTL))
	pause := min(max(lease.TTL/20, 10*time.Millisecond), time.Second)
	go func() {
		defer cancel()
		for replies := 0; replies < 2; {
			n, err := releaseScript.Run(ctx, l.client, lease.keys[:1], lease.value).Int()
			switch {
			case err == nil && n == 1:
				return // it had run, and is undone
			case err == nil:
				replies++
			case !noReply(err) || ctx.Err() != nil:
				return
			default: // not answered (yet): a server frozen, restarting
				t := time.NewTimer(pause)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
			}
		}
	}()
}
