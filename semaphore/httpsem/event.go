package httpsem

import (
	"net/http"
	"time"
)

// Outcome is what the middleware did with a request, in an Event.
type Outcome string

// The outcomes an Event reports.
const (
	// OutcomeAdmitted: a permit was taken and the handler runs under it.
	OutcomeAdmitted Outcome = "admitted"
	// OutcomeFull: Capacity requests of the key were in flight; refused
	// with 429 (or Config.Full).
	OutcomeFull Outcome = "full"
	// OutcomeFailedOpen: Redis did not answer; served without a permit.
	OutcomeFailedOpen Outcome = "failed_open"
	// OutcomeFailedClosed: Redis did not answer; refused with 503.
	OutcomeFailedClosed Outcome = "failed_closed"
	// OutcomeError: the request could not be counted (Key failed, or gave
	// an empty key); refused with 500.
	OutcomeError Outcome = "error"
)

// Event is what Config.Hook is told about one request that is not
// skipped, with the request's context.
type Event struct {
	Outcome Outcome
	// Request is the request decided on, for its method, route or
	// headers.
	Request *http.Request
	// Key is the semaphore the request counted against ("" when Key failed).
	Key string
	// Token is the permit's fencing token, for OutcomeAdmitted.
	Token int64
	// InFlight is, for OutcomeFull, how many permits of Key were live.
	InFlight int
	// Latency is how long the acquire took; zero when none was made (Key
	// failed).
	Latency time.Duration
	// Err is the acquire's or Key's error; a *semaphore.FullError for
	// OutcomeFull.
	Err error
}
