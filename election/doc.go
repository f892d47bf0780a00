// Package election elects one leader among processes with a lease from
// package lock that renews itself. There is no other algorithm: the lease's
// fencing token is the term's epoch, and naming it an election adds no
// guarantee the lock did not have.
//
// Run calls fn once per term, with a context that ends with the term and
// the term's Fencer; fn leads until that context ends, writing every side
// effect through the Fencer, and stops on fence.ErrStale (the package's
// quickstart example shows the loop). Returning from fn resigns.
//
// # The step-down rule
//
// A leader leads until its lease's local deadline: the time the last
// successful renewal was sent, on the monotonic clock, plus the TTL, minus
// a safety margin. A renewal that succeeds moves the deadline; a renewal
// that finds the lease gone ends the term at once; Redis errors are ridden
// out, and retried, until the deadline and not a moment longer. The server
// starts counting the TTL no earlier than the renewal was sent, so the
// deadline falls before the lease expires on the server, and a leader whose
// process keeps running steps down before anyone else can be elected.
// docs/decisions/0006-election-step-down-rule.md records why.
//
// # What is guaranteed
//
//   - At most one node holds the lease at a time, and every term's epoch is
//     larger than every earlier term's, for as long as the counter survives.
//   - A leader whose process runs steps down by its local deadline: fn's
//     context is cancelled, IsLeader turns false by the clock, the Hook
//     is told why.
//   - A leader that stops (ctx ends, or fn returns) releases its lease and
//     a waiting follower is elected within milliseconds (a release
//     notification wakes it). A leader that crashes or stalls is replaced
//     within milliseconds of its lease's expiry: a follower sleeps until the
//     moment its last refusal said the lease would end.
//
// # What is not: the split-brain window
//
// Two nodes can both believe they lead. A leader whose process is paused (a
// GC pause, SIGSTOP, a suspended VM, a CPU-starved container) cannot check
// anything; its lease expires on the server, a follower is elected, and the
// old leader goes on believing it leads until it runs again and checks. The
// window lasts from the new election until the old leader wakes: bounded by
// the pause, not by the TTL, and Redis bounds the pause in no way. The tests
// measure it on a process frozen with SIGSTOP for 1.5s under a 400ms lease:
// about 1.1s.
//
// On waking, IsLeader is already false (it compares the clock with the
// deadline, which has passed), but fn's context is cancelled only when the
// renewal goroutine gets to run, and code that checked before the pause
// does not check again: it writes. Only the epoch stops that write. A
// resource that compares epochs (Term.Fencer for Redis keys, package
// pgfence for PostgreSQL) refuses it once the new leader has written;
// a resource that cannot compare cannot be protected, and the work done
// there must be idempotent instead.
//
// So IsLeader is advisory: never gate a correctness-sensitive write on it.
// Carry the epoch with the write.
//
// # When a write is refused as stale
//
// A write refused with fence.ErrStale proves a newer term has written: this
// term can write nothing more, whatever its lease says. A refusal through
// Term.Fencer ends the term at once (ReasonFencedOut: fn's context is
// cancelled, the lease released, the Hook told). fn must stop on
// fence.ErrStale, never retry the write: return (the error is then taken
// for the term's end, not fn's failure), or let its context end it. A
// refusal from a resource the Fencer does not write to (package pgfence,
// through Term.Fencer.Token) is fn's to act on the same way: return.
//
// # Errors Run does not retry
//
// Run rides out Redis errors that may pass (a lost connection, a timeout, a
// failover in progress) and retries them. It returns at once, with the
// error, on those no retry can fix: credentials the server refuses
// (WRONGPASS, NOAUTH), an ACL that refuses the election's commands
// (NOPERM), a server without them (a Redis too old: lock.ErrRedisTooOld), a
// key of another type under the election's keys (WRONGTYPE). New refuses a
// Name package lock would refuse. Either way the failure is not silent:
// every failed attempt reaches Config.Hook and Config.Logger,
// and Healthy fails (ErrUnreachable) once Redis has answered none of a
// contending node's attempts for longer than TTL + RetryInterval. docs/decisions/0009-election-term-ends-on-a-stale-write.md
// records both rules.
//
// Also not guaranteed, as for package lock: survival of the lease across a
// Redis failover (a promoted replica may lack it, and two nodes lead until
// the older one's writes are refused), epochs that never go back when the
// servers' clocks differ by more than the gap around a failover or a
// restart without persistence (epochs follow lock's tokens: the server's
// clock, or the counter alone with lock.WithCounterTokens), and expiry on
// the local clock (the server's clock times the lease; SafetyMargin covers
// drift, not a clock step). A renewal that timed out is ridden out and
// retried until the lease's local deadline, then the term ends
// (internal/clienttest's
// TestElectionLeaderStepsDownByItsLocalDeadlineWhenRedisFreezesAndOneLeadsAfterThaw).
//
// # ACL
//
// The least privilege a Redis user needs for this package, with the
// default prefix "election:" and the data the term's Fencer writes under
// "app:":
//
//	ACL SETUSER app on >secret resetkeys ~election:* ~app:*
//	    resetchannels &election:* -@all
//	    +evalsha +eval +evalsha_ro +eval_ro
//	    +get +set +pttl +del +pexpire +mget +time +publish +subscribe
//
// These are package lock's commands (see its doc; Preflight's +info and
// +config|get are not needed): the commands lock's scripts run are checked
// against the user's ACL too. A follower waits on the channel P{N}:released
// (SUBSCRIBE, which "&election:*" covers), and a leader's release PUBLISHes
// there. Term.Fencer's Set runs GET and SET; HSet needs +hset, and a
// script given to Eval the commands it runs.
// TestUserLimitedToTheDocumentedACLLeadsHandsOverAndNeedsEveryCommand runs a
// term, a fenced write, a renewal, Leader, Resign and a handover as exactly
// this user, and shows that each command is needed. Run returns, without
// retrying, the error of a command the ACL refuses.
//
// # Clients
//
// An Elector runs on a Client: a Redis client through its adapter module,
// goredisadapter.New(rdb) for go-redis (election.New(goredisadapter.New(rdb),
// cfg)), rueidisadapter.New(rc) for rueidis, valkeyadapter.New(vc) for
// valkey-go. On go-redis, set ContextTimeoutEnabled in the client's
// options: the step-down does not depend on it, but how soon a demoted node
// re-contends, and how soon Run returns when Redis is frozen, do.
package election
