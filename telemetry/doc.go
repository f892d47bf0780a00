// Package telemetry turns the hooks of this repository's primitives into
// OpenTelemetry metrics and spans. It is a module of its own so that lock,
// fence, pgfence, ratelimit, semaphore and election require no
// OpenTelemetry.
//
// Make one Telemetry per process with New. It attaches to every primitive
// the same way: each primitive reports through one hook, a function of its
// Event, and Telemetry has a method of that signature named after it, given
// where the primitive takes its hook:
//
//   - lock.WithHook(t.Lock), semaphore.WithHook(t.Semaphore),
//     fence.WithHook(t.Fence), ratelimit.WithHook(t.RateLimit);
//   - httprate.Config{Hook: t.HTTPRate} (the rate-limit middleware's
//     outcomes, failing open and closed among them),
//     httpsem.Config{Hook: t.HTTPSem} (the concurrency-limit middleware's);
//   - election.Config{Hook: t.Election} (transitions, attempts, renewals,
//     the epoch, spans);
//   - pgfence.WithHook(pgfencetel.Hook(t)): a function of a package of its
//     own, so that this one does not pull in PostgreSQL's driver.
//
// A primitive has one hook: to observe with your own as well, write a hook
// that calls both.
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
//     leadership moving between the others; election.attempts, election.attempt.duration, election.renewals and
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
// "ratelimit.commit", "ratelimit.cancel", "ratelimit.extend", "semaphore.acquire",
// "semaphore.wait", "semaphore.extend", "semaphore.release", "fence.write",
// "election.attempt" and "election.renew", with the metric attributes, the
// fencing token (lock.token, semaphore.token, fence.token, election.epoch),
// what a refusal saw (lock.holder.token, semaphore.holders, fence.highest),
// ratelimit.remaining and, on failure, the error and status Error. A hook
// runs after the call, so each span is recorded afterwards with the call's
// start and end times. HTTPRate and HTTPSem record no spans: the limiter's
// and the Issuer's, under the request's span, cover their calls.
//
// # Cost
//
// With the SDK, a call costs a few microseconds more (the bench figures are
// in telemetry's bench_test.go); without a hook the primitives allocate
// nothing for it.
package telemetry
