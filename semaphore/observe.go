package semaphore

import (
	"time"

	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

// A refusal's outcome, semaphore's alone; the other words are the lease
// core's. They are listed once, in Event's doc.
const outcomeFull = "full"

// Event is one decision of an Issuer, given to the hook set with WithHook.
// Bad input, returned before any round trip, is not reported.
type Event struct {
	// Op is what the Issuer did:
	//
	//   - "acquire": one attempt to take a permit: Acquire, each attempt of
	//     AcquireWait, and WithPermit's;
	//   - "wait": a whole AcquireWait call, reported when it returns;
	//   - "extend": Extend, and each renewal of WithPermit or a Keeper;
	//   - "lost": WithPermit or a Keeper giving up a permit it held, the
	//     moment its context is cancelled with ErrPermitLost;
	//   - "release": Release, and WithPermit's release.
	Op string
	// Outcome is how it ended, by Op:
	//
	//   - "acquire": "acquired", "full" or "error";
	//   - "wait": "acquired" or "error";
	//   - "extend": "ok", "not_held" or "error";
	//   - "lost": "not_held" (a renewal found the permit gone) or
	//     "deadline" (no renewal succeeded before the local deadline);
	//   - "release": "released", "not_held" (the permit had expired or was
	//     released before) or "error".
	Outcome string
	// Name is the semaphore's name; Capacity the capacity the call gave.
	Name     string
	Capacity int
	// PermitID and Token identify the permit; empty and 0 for a refused or
	// failed acquire.
	PermitID string
	Token    int64
	// Holders is, for "full", how many permits were live.
	Holders int
	// ServerTime is the server's clock when the script ran (acquire,
	// release, extend), so that a trace can order decisions as the server
	// did; zero when no reply came.
	ServerTime time.Time
	// Latency is how long the call took; for "wait" the whole wait.
	Latency time.Duration
	// HeldFor is, for "release" and "lost", how long the permit had been
	// held since the server granted it, on this process's clock.
	HeldFor time.Duration
	// Err is the call's error for "error", the *FullError for
	// "full", and the cause (matching ErrPermitLost) for "lost".
	Err error
}

// Event returns semaphore's Event for the core's e.
func (kind) Event(e leasecore.Event) Event {
	return Event{Op: e.Op, Outcome: e.Outcome, Name: e.Name, Capacity: e.Capacity, PermitID: e.ID, Token: e.Token, Holders: e.Holders,
		ServerTime: e.ServerTime, Latency: e.Latency, HeldFor: e.HeldFor, Err: e.Err}
}

func (kind) Warnings() (lost, gone string) {
	return "semaphore: permit lost while held", "semaphore: permit was gone before its release"
}
