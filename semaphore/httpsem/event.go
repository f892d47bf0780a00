package httpsem

import (
	"net/http"
	"time"
)

// The outcomes an Event reports, as its Outcome says them: strings, the
// words a metrics adapter records, listed once, in Event's doc.
const (
	outcomeAdmitted     = "admitted"
	outcomeFull         = "full"
	outcomeFailedOpen   = "failed_open"
	outcomeFailedClosed = "failed_closed"
	outcomeError        = "error"
)

// Event is what Config.Hook is told about one request that is not
// skipped, with the request's context.
type Event struct {
	// Outcome is what the middleware did with the request:
	//
	//   - "admitted": a permit was taken and the handler runs under it;
	//   - "full": Capacity requests of the key were in flight; refused
	//     with 429 (or Config.Full);
	//   - "failed_open": Redis did not answer; served without a permit;
	//   - "failed_closed": Redis did not answer; refused with 503;
	//   - "error": the request could not be counted (Key failed, or gave
	//     an empty key); refused with 500.
	Outcome string
	// Request is the request decided on, for its method, route or
	// headers.
	Request *http.Request
	// Key is the semaphore the request counted against ("" when Key failed).
	Key string
	// Token is the permit's fencing token, for "admitted".
	Token int64
	// InFlight is, for "full", how many permits of Key were live.
	InFlight int
	// Latency is how long the acquire took; zero when none was made (Key
	// failed).
	Latency time.Duration
	// Err is the acquire's or Key's error; a *semaphore.FullError for
	// "full".
	Err error
}
