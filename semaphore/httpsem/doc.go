// Package httpsem is net/http middleware that limits how many requests per
// key are in flight at once, with a semaphore.Issuer: at most Capacity
// concurrent requests per client, tenant or route, as a concurrent-requests
// limiter does (a rate limiter bounds how many start per second; this
// bounds how many run).
//
// Each request is mapped to a key by Config.Key and takes one permit of the
// semaphore named after it, in one script call bounded by Config.Timeout.
// The permit is renewed while the handler runs (semaphore.Keeper) and
// released when the handler returns or panics; if the process dies, the
// permit expires with Config.TTL, so a crash never shrinks the limit for
// longer than that. The handler's request context is cancelled if the
// permit can no longer be proven (Redis unreachable past its deadline).
//
// A request refused because Capacity are in flight gets 429 Too Many
// Requests with Retry-After (Config.RetryAfter, default 1s: a place frees
// when any in-flight request ends, which no one can foresee) and an
// application/problem+json body (RFC 9457), or whatever Config.Full writes.
//
// When Redis does not answer within Config.Timeout (default 100ms), the
// request is served without a permit (it fails open, the default) or, with
// Config.FailClosed, answered 503 with Retry-After: 1. The Issuer's client
// must end a call at its context's deadline (on go-redis, set
// ContextTimeoutEnabled in the options of the client given to
// goredisadapter.New), or a frozen server holds each request for the
// client's read timeout instead.
//
// Config.Hook, if set, is told about every request that is not skipped, as
// an Event with the request's context: its Outcome (admitted, full,
// failed_open, failed_closed, error), the request, key, the permit's token
// or the number in flight, the acquire's latency and its error, for
// metrics and traces. Module telemetry's HTTPSem is one.
package httpsem
