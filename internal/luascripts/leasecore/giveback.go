package leasecore

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// NoReply reports whether err says a call got no reply, so its script may
// have run, or may still run once a frozen or slow server wakes: a
// timeout, a lost connection. A server's error reply says it did not, and
// a closed client (before the call, luascripts.ErrClosed, or under it,
// net.ErrClosed) sent nothing that will run later.
func NoReply(err error) bool {
	if err == nil || errors.Is(err, luascripts.ErrClosed) || errors.Is(err, net.ErrClosed) {
		return false
	}
	_, replied := luascripts.ReplyMessage(err)
	return !replied
}

// GiveBack gives back, best effort and in the background, what an acquire
// sent at sent for ttl may have granted although its reply never came.
// release gives back that grant by its own id, so never another holder's,
// and reports whether it freed something. GiveBack sends it until it
// frees the grant, or until ttl has passed since sent; it gives up sooner
// on the server's error and on a closed client.
//
// A release that finds nothing does not end it. The acquire may still
// land: TCP goes on retransmitting what a connection carried after the
// client closed it, and on a path that failed for that connection alone
// (a partition that heals, a flapping link) it may reach the server after
// releases sent on a new connection. (The second release is sent at once
// after the first's reply: a server woken from a freeze has run by then
// what it had queued, the acquire included.) GiveBack then looks again a
// twentieth of the TTL later (at most a second), and after that at
// doubling intervals up to a fifth of the TTL: such a grant, most likely
// delivered soon after the path heals, is held for nobody that long at
// most, not for its whole TTL, and the many give-backs of an outage do
// not each poll the server once a second after it. A grant that lands
// once ttl has passed since sent still expires with its TTL. GiveBack
// ends by then at the latest; between its tries it holds a timer, not a
// goroutine.
//
// The first release may take each at most (the acquire's own time, when
// its context had a deadline; 0 for no bound but ttl's), and each one
// after a release that got no answer twice as long, up to a twentieth of
// the TTL and at most a second (or each, if longer). A background call must not hold the
// caller's other calls back much longer than the caller let its acquire
// take: on rueidis and valkey-go a call that finds its connection closed
// (a timeout may close it) dials a new one, and every call in the meantime
// waits for that dial, whatever its own context says, for as long as the
// dialling call's context allows (up to the Dialer's 5 s by default) while
// a frozen server never answers its handshake. It must still reach a
// server slower than the acquire's deadline, or it would give back nothing
// where it is needed most.
func GiveBack(sent time.Time, ttl, each time.Duration, release func(ctx context.Context) (freed bool, err error)) {
	ctx, cancel := context.WithDeadline(context.Background(), sent.Add(ttl))
	// Retries start soon (a server that was only slow) and back off to a
	// twentieth of the TTL, at most a second (one still frozen); looks after
	// the server answered start there and back off to a fifth of the TTL.
	most := min(max(ttl/20, 10*time.Millisecond), time.Second)
	g := &giveBack{ctx: ctx, cancel: cancel, release: release, ttl: ttl, each: each, most: most,
		retry: 10 * time.Millisecond, look: most, limit: each}
	go g.try()
}

// giveBack is one GiveBack's state between its tries. It holds a timer
// while it waits for the next, not a goroutine: an outage starts one for
// every acquire that timed out, and each waits until its TTL.
type giveBack struct {
	ctx                context.Context
	cancel             context.CancelFunc
	release            func(context.Context) (bool, error)
	ttl, each, most    time.Duration
	retry, look, limit time.Duration
	answered           int
}

// try sends releases until one frees the grant, one must be waited for
// (it then sets a timer to try again and returns), or the give-back ends.
func (g *giveBack) try() {
	for g.ctx.Err() == nil {
		freed, err := once(g.ctx, g.limit, g.release)
		var wait time.Duration
		switch {
		case err == nil && freed:
			g.cancel() // the acquire had run, and is undone
			return
		case err == nil:
			g.answered++
			if g.answered == 1 {
				continue // at once: what the server had queued has run now
			}
			wait, g.look = g.look, min(2*g.look, max(g.ttl/5, g.most)) // the acquire may land later
		case !NoReply(err) || g.ctx.Err() != nil:
			g.cancel()
			return
		default: // no answer yet: a server still frozen or restarting
			wait, g.retry = g.retry, min(2*g.retry, g.most)
			if g.limit > 0 {
				g.limit = min(2*g.limit, max(g.each, g.most))
			}
		}
		if d, _ := g.ctx.Deadline(); time.Until(d) <= wait {
			break // the TTL ends first: a grant still there expires with it
		}
		time.AfterFunc(wait, g.try)
		return
	}
	g.cancel()
}

// once runs release with at most each (no bound when each is 0) within ctx.
func once(ctx context.Context, each time.Duration, release func(context.Context) (bool, error)) (bool, error) {
	if each <= 0 {
		return release(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, each)
	defer cancel()
	return release(ctx)
}
