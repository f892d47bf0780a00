package httpsem

import "time"

// Outcome is what the middleware did with a request.
type Outcome string

// The outcomes a Decision reports.
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

// Decision is what OnDecision is told about one request.
type Decision struct {
	Outcome Outcome
	// Key is the semaphore the request counted against ("" when Key failed).
	Key string
	// Token is the permit's fencing token, for OutcomeAdmitted.
	Token int64
	// InFlight is, for OutcomeFull, how many permits of Key were live.
	InFlight int
	// Latency is how long the acquire took.
	Latency time.Duration
	// Err is the acquire's or Key's error; a *semaphore.FullError for
	// OutcomeFull.
	Err error
}
