// Package httprate is net/http middleware that rate-limits requests with a
// ratelimit.Limiter.
//
// Config.Limiter is the Limiter interface (Allow and AllowN), which
// *ratelimit.Limiter satisfies, and in tests the in-memory
// *ratelimittest.Limiter, which decides as the Redis one does: a handler
// behind the middleware is unit-tested without a server (see the
// Limiter example).
//
// Each request is mapped to a key by a function the caller supplies
// (ClientIP builds one that trusts X-Forwarded-For, Forwarded or a header
// of the proxy's own, such as X-Real-IP, only from configured proxies, and
// keys by a prefix of the client's address: by default an IPv6 client's
// /64, which it can rotate through, and an IPv4 client's address) and
// checked against a
// ratelimit.Policy in one script call. Every decided response carries the
// RateLimit-Policy and RateLimit fields of draft-ietf-httpapi-ratelimit-headers
// (structured-field form, e.g. `RateLimit-Policy: "api";q=100;w=60` and
// `RateLimit: "api";r=42;t=7`). A rejected request gets 429 Too Many
// Requests, Retry-After in whole seconds rounded up, and an
// application/problem+json body (RFC 9457).
//
// In those fields, for each limit, q is the most it admits at once, w the
// time in seconds it takes to go from nothing remaining back to q (left out
// when not a whole number of seconds), r what it admits now (0 <= r <= q)
// and t the seconds until r is back to q, rounded up:
//
//   - SlidingLog(n, window): q = n, w = window; t <= w.
//   - SlidingCounter(n, window): q = n, w = window; t <= 2w, since the
//     requests of the current bucket still count, weighted, through the
//     next one.
//   - GCRA(n, per, burst): q = burst, w = burst·per/n, the time the
//     bucket takes to refill (GCRA(1, time.Second, 20) advertises q=20;w=20,
//     not its rate); t <= w. The sustained rate is q/w = n/per.
//
// Config's optional knobs:
//
//   - Skip: requests that are not limited (health checks, internal
//     callers), served with no call to Redis.
//   - Cost: how many requests one request counts for (a batch, its rows),
//     admitted all or none.
//   - Limited: writes the 429 response instead of the problem+json default.
//   - LegacyHeaders: X-RateLimit-Limit, -Remaining and -Reset as well, for
//     the clients and gateways that still read them ("seconds" or "unix",
//     how Reset is written).
//   - Hook: told about every request that is not skipped, as an Event
//     with the request's context: its Outcome (allowed, rejected,
//     failed_open, failed_closed, error), key, cost, binding limit,
//     remaining, latency and error, for metrics and traces.
//   - Logger: a *slog.Logger for what an operator acts on (failing open or
//     closed, a request that cannot be metered). Nothing is logged without
//     one.
//
// Per-route policies are one Middleware per route, with keys that name the
// route (see the per-route example): a limit's state is named after the key
// and the limit's parameters, so routes that share a limit and a key share
// its count.
//
// When Redis does not answer within Config.Timeout (default 100ms), the
// middleware fails open (the default): it lets the request through without
// rate-limit headers; with Config.FailClosed it answers 503 with a
// problem+json body instead. The default is open because a limiter usually
// protects a service, and an outage of the limiter's store should not
// become an outage of the service; set FailClosed where an unmetered
// request costs more than a refused one. The middleware never panics on a store failure.
//
// The timeout only holds if the client honours context deadlines on its
// socket: on go-redis (goredisadapter), set redis.Options.ContextTimeoutEnabled
// to true. Without it a stalled server holds every request for the client's
// ReadTimeout (with Redis frozen by SIGSTOP we measured 5s against a 150ms
// Timeout).
package httprate
