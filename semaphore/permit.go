package semaphore

import (
	"time"

	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

// Permit is one place in a semaphore, held until it is released or its TTL
// passes. Pass its Token with every write the permit guards, so the
// resource can refuse a holder whose permit expired (package fence). A
// Permit is a plain value owned by one goroutine; Extend updates it.
type Permit struct {
	// Name is the semaphore's name.
	Name string
	// ID is the permit's random id, chosen by this process before the
	// acquire was sent; Release and Extend act on it alone.
	ID string
	// Token is the fencing token: max(the semaphore's counter + 1, the
	// server's time in µs). Every permit of a semaphore gets a larger one
	// than all granted before it (see the package doc for the bound).
	Token int64
	// Capacity is the capacity the acquire asked for.
	Capacity int
	// TTL is the permit's time to live, as sent (whole milliseconds).
	TTL time.Duration
	// Owner is the Issuer's owner label stored with the permit.
	Owner string
	// RequestedAt is the local time the acquire, or the last Extend, was
	// sent (monotonic), so Deadline errs early, never late.
	RequestedAt time.Time
	// Granted is the server's clock when it granted the permit.
	Granted time.Time

	keys       [4]string
	acquiredAt time.Time // RequestedAt of the acquire, which Extend does not move: for Event.HeldFor
}

// Held reads p for the lease core.
func (kind) Held(p *Permit) leasecore.Held {
	return leasecore.Held{Name: p.Name, ID: p.ID, Token: p.Token, Capacity: p.Capacity, TTL: p.TTL, Sent: p.RequestedAt, Acquired: p.acquiredAt, Granted: p.Granted}
}

// Extended records an Extend for ttl sent at sent.
func (kind) Extended(p *Permit, sent time.Time, ttl time.Duration) { p.TTL, p.RequestedAt = ttl, sent }

// Deadline returns RequestedAt + TTL - margin: the last moment this process
// may treat the permit as held, unless it is extended first.
func (p *Permit) Deadline(margin time.Duration) time.Time {
	return p.RequestedAt.Add(p.TTL - margin)
}
