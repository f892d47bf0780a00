// Package robustness records the operations of many clients of the
// primitives against real servers while it injects faults, and checks the
// recorded histories with a linearizability checker (porcupine), as etcd's
// robustness suite does. It is a module of its own, never released: the
// checker is a dependency of this module only.
//
// A history is one key's operations in one run: every call's invocation and
// return on the wall clock (the servers run on this host, so it is also the
// clock their TIME reads), its arguments, and its result, or an unknown
// outcome when the call timed out or its reply was lost. An unknown outcome
// is taken as both applied and not, as etcd does: porcupine may linearize it
// anywhere after its invocation up to the last instant anything could still
// run it (its deadline and a second after, or the end of a stop of the
// server it overlapped: history.go's unknownBound), or never.
//
// The models, each in a file of its own:
//
//   - register.go: a fenced key (fence, pgfence, an election's Fencer) as a
//     register whose accepted writes carry non-decreasing tokens and whose
//     reads see the last accepted write; a stale write must be refused.
//   - holders.go: the lock and the semaphore as holders with a capacity,
//     judged on the server's clock where the guarantee is made: a grant while
//     capacity holders were certainly within their leases is illegal, and so
//     is a refusal while fewer could have been.
//   - tokens.go: a lock's fencing tokens, each above every token granted
//     before it, recorded apart for the default tokens and for Lockers
//     WithCounterTokens, whose tokens a loss of the counter sends back.
//   - epochs.go: an election's terms: one leader per epoch, each node's
//     epochs up (its writes are checked by the register model).
//   - window.go: a sliding-log limit as a bound per window, since a decision's
//     reply does not carry the server's clock.
//
// Where a documented non-guarantee applies, the model says so: a fault that
// loses acknowledged state (a restart without persistence, a failover to a
// lagging replica) is recorded as a loss event, which the lenient form of a
// model may apply, and a history legal only with its losses is counted as
// such, apart from the legal ones. Nothing is dropped.
//
// The tests are the harness: go test runs the smoke (a few seconds of each
// fault), and make verify runs the long form with -verify.
package robustness
