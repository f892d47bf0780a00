// Package telemetry turns the hooks of this repository's primitives into
// OpenTelemetry metrics and spans. It is a module of its own so that lock,
// fence, pgfence, ratelimit, semaphore and election require no
// OpenTelemetry.
//
// Make one Telemetry per process with New, then pass its options to each
// primitive's constructor:
//
//   - Lock for lock.New, RateLimit for ratelimit.New, Fence for fence.New,
//     Semaphore for semaphore.New;
//   - HTTPRateHook for httprate.Config.Hook (the rate-limit middleware's
//     outcomes, failing open and closed among them);
//   - HTTPSemHook for httpsem.Config.Hook (the concurrency-limit
//     middleware's outcomes, failing open and closed among them);
//   - pgfencetel.Hook for pgfence (a package of its own, so that this one
//     does not pull in PostgreSQL's driver);
//   - ElectionHook for election.Config.Hook (attempts, renewals, the epoch,
//     spans), or Election for election.Config.Observer (transitions only).
//
// # Metrics
//
// Durations are histograms in seconds, counts are counters; names and
// attributes follow OpenTelemetry's semantic-convention style (dotted,
// lower case, a unit per instrument):
//
//   - lock.operation.duration, lock.wait.duration, lock.hold.duration,
//     lock.lost, by lock.operation, lock.outcome, lock.lost.cause;
//   - ratelimit.decisions, ratelimit.decision.duration, ratelimit.wait.duration,
//     by ratelimit.operation, ratelimit.outcome and ratelimit.limit.name, and
//     ratelimit.cached on answers from the deny cache (counted, not timed);
//   - httprate.requests, httprate.decision.duration, by httprate.outcome
//     (allowed, rejected, failed_open, failed_closed, error) and
//     ratelimit.limit.name;
//   - semaphore.operation.duration, semaphore.wait.duration,
//     semaphore.hold.duration, semaphore.lost, by semaphore.operation,
//     semaphore.outcome, semaphore.lost.cause;
//   - httpsem.requests, httpsem.acquire.duration, by httpsem.outcome
//     (admitted, full, failed_open, failed_closed, error);
//   - fence.writes, fence.write.duration, by fence.store, fence.operation,
//     fence.outcome (accepted; stale: the refusal that kept a stale holder
//     out; error: no verdict) and, for PostgreSQL, fence.table;
//   - election.transitions, election.term.duration, election.leader, by
//     election.name, election.transition (elected, demoted, follower,
//     leader_changed) and election.demotion.reason; leader_changed counts
//     every term a node sees, so a node that never leads still shows
//     leadership moving between the others; with ElectionHook also
//     election.attempts, election.attempt.duration, election.renewals and
//     election.renewal.duration by election.outcome, and election.epoch,
//     the latest term's epoch.
//
// Lock names (WithLockNames), semaphore names (WithSemaphoreNames, httpsem's
// keys included) and user keys (WithKeys) are attributes only when asked
// for: each distinct value is a time series of its own.
//
// # Spans
//
// Each call gets a span under the caller's span (the parent is taken from
// the call's context): "lock.acquire", "lock.wait", "lock.extend",
// "lock.release", "lock.force_release", "ratelimit.allow",
// "ratelimit.wait", "ratelimit.take", "ratelimit.peek", "ratelimit.reserve",
// "ratelimit.commit", "ratelimit.cancel", "semaphore.acquire",
// "semaphore.wait", "semaphore.extend", "semaphore.release", "fence.write"
// and, with ElectionHook, "election.attempt" and "election.renew", with the
// outcome, the fencing token (lock.token, semaphore.token, fence.token,
// fence.highest) and, on failure, the error and status Error. A hook runs
// after the call, so each span is recorded afterwards with the call's start
// and end times. HTTPRateHook and HTTPSemHook record no spans: the
// limiter's and the Issuer's, under the request's span, cover their calls.
//
// # Cost
//
// With the SDK, a call costs a few microseconds more (the bench figures are
// in telemetry's bench_test.go); without a hook the primitives allocate
// nothing for it.
package telemetry
