package semaphore

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// unanswered reports whether err says a call got no reply, so its script
// may have run, or may still run once a frozen or slow server wakes: a
// timeout, a lost connection. A server's error reply says it did not run
// to a grant, and a closed client sent nothing.
func unanswered(err error) bool {
	_, reply := luascripts.ReplyMessage(err)
	return err != nil && !reply && !closed(err)
}

// closed reports whether err says the client was closed: before the call
// (luascripts.ErrClosed) or while it waited for the reply (its connection
// closed under it, net.ErrClosed, which a client may pass on as it is).
func closed(err error) bool {
	return errors.Is(err, luascripts.ErrClosed) || errors.Is(err, net.ErrClosed)
}

// reclaim gives back, in the background, the permit that p's acquire may
// have taken although its reply never came. It releases p by its id
// (release.lua), so never another holder's permit, and stops once the
// release frees it, once the server has answered two releases that found
// nothing (the second is sent after the first's reply, when the woken
// server has run whatever it had queued, the acquire included), on the
// server's error or a closed client, and when p's TTL has passed since the
// acquire was sent: by then the permit has expired by itself.
func (s *Issuer) reclaim(p *Permit) {
	ctx, cancel := context.WithDeadline(context.Background(), p.RequestedAt.Add(p.TTL))
	keys := []string{p.keys[0], p.keys[1], p.keys[3]}
	// Retries start soon (a server that was only slow) and back off to a
	// twentieth of the TTL, at most a second (one still frozen).
	pause, most := 10*time.Millisecond, min(max(p.TTL/20, 10*time.Millisecond), time.Second)
	go func() {
		defer cancel()
		for empty := 0; empty < 2; {
			res, err := releaseScript.Run(ctx, s.client, keys, p.ID).Int64Slice()
			switch {
			case err == nil && len(res) == 2 && res[0] == 1:
				return // the acquire had run; its place is back
			case err == nil:
				empty++
			case !unanswered(err) || ctx.Err() != nil:
				return
			default: // no answer yet: a server still frozen or restarting
				select {
				case <-ctx.Done():
					return
				case <-time.After(pause):
				}
				pause = min(2*pause, most)
			}
		}
	}()
}
