package lock

import (
	"time"

	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

// Lease is one acquisition of a lock. Token is what makes it useful: pass it
// with every write the lock protects, so the resource can refuse a holder
// whose lease has expired (see package fence).
//
// A Lease is a plain value owned by one goroutine; Extend updates it.
type Lease struct {
	// Name is the lock's name.
	Name string
	// Token is the fencing token: max(counter + 1, the server's time in
	// µs), or counter + 1 with WithCounterTokens. It grows with every
	// acquisition of the name (see the package doc for the bound). It stays
	// below 2^53, which fence and pgfence accept, until the 23rd century.
	Token int64
	// TTL is the lease's time to live, as sent to Redis (whole milliseconds).
	TTL time.Duration
	// Owner is the Locker's owner label stored with the lock.
	Owner string
	// RequestedAt is the local time the acquire, or the last successful
	// Extend, was sent. It carries the monotonic clock reading, so Deadline
	// is immune to wall-clock steps. The server started counting TTL later
	// than this, never earlier, so a deadline measured from it errs on the
	// safe side.
	RequestedAt time.Time
	// Replicas is how many replicas acknowledged the lock, when the Locker
	// was made WithReplicas; otherwise 0.
	Replicas int

	keys  [2]string // the lock's key and its counter's: the scripts' KEYS
	value string    // "<id> <owner>": what the lock holds while this lease has it

	acquiredAt time.Time // RequestedAt of the acquire, which Extend does not move: for Event.HeldFor
}

// Deadline returns RequestedAt + TTL - margin: the last moment this process
// may treat the lease as held, unless it is extended first.
func (l *Lease) Deadline(margin time.Duration) time.Time {
	return l.RequestedAt.Add(l.TTL - margin)
}

// Held reads lease for the lease core.
func (kind) Held(lease *Lease) leasecore.Held {
	return leasecore.Held{Name: lease.Name, Token: lease.Token, Capacity: 1, TTL: lease.TTL, Sent: lease.RequestedAt, Acquired: lease.acquiredAt}
}

// Holder describes who holds a lock, as returned by Locker.Holder.
type Holder struct {
	// Held reports whether anyone holds the lock. The other fields are zero
	// when not.
	Held  bool
	Token int64
	Owner string
	// TTL is the holder's remaining time to live.
	TTL time.Duration
}
