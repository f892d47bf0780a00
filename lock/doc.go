// Package lock is a lease-based lock on a single Redis server that hands out
// fencing tokens.
//
// Acquire takes a name for a TTL in one atomic script and returns a Lease
// whose Token is max(counter + 1, the server's time in µs), a hybrid
// logical clock kept in the name's counter: larger than every token issued
// for that name before, and still larger after the counter is lost, as long
// as the bound below holds. WithCounterTokens makes tokens counter + 1 only. Release and Extend act only on a lease that
// still holds the lock (compare-and-delete, compare-and-expire), so a holder
// whose lease expired never deletes, prolongs or resurrects the next
// holder's. WithLock runs a function under the lock and renews it; a Keeper
// does the renewing for longer-lived holders; AcquireWait waits for a
// release, woken by a notification the release script publishes.
//
// Acquire is one round trip: it advances the counter and sets the lock
// (SET PX), or, when the name is held, answers with the holder's token,
// owner and remaining TTL. A failed acquire writes no lock. Release and Extend are one round trip each.
// WithBatching shares those round trips among the calls goroutines make at
// the same moment, each still its own script.
//
// # What is guaranteed
//
//   - At most one live lease per name on the server, and tokens that strictly
//     increase across every acquisition of a name, for as long as the
//     counter key survives.
//   - With the default tokens, also across a loss of the counter (FLUSHALL,
//     eviction, a restart without persistence, a failover to a replica that
//     missed the last acquisitions), provided the new server's clock is
//     behind the old one's by less than the time between the last
//     acquisition on the old server and the first on the new one (a
//     failover takes seconds; NTP keeps clocks within milliseconds).
//     CheckReplicaClocks reports replicas whose clocks are further off.
//   - A lost lease is reported: Release returns false, Extend ErrNotHeld,
//     WithLock ErrLeaseLost, and the context WithLock and Keeper hand out is
//     cancelled once the lease's local deadline passes without a renewal:
//     the time the last acquire or renewal was sent, on the monotonic clock,
//     plus the TTL, minus a safety margin.
//
// # What is not
//
//   - That only one process acts as holder at a time. A lease can expire
//     while its holder still runs (a GC pause, a frozen VM, a slow call) and
//     nothing in Redis can stop that process. The token is what lets the
//     resource refuse the stale holder's writes, and only if the resource
//     checks it (package fence). Fencing orders writes; a stale holder that
//     writes before the new one has written anything is not refused.
//   - Survival of the lock across a failover. Replication is asynchronous: a
//     promoted replica may lack the lock, and a second holder then acquires
//     while the first still runs; the token fences the older one out once
//     the newer one writes. WithReplicas narrows that window; it does not
//     close it. This is not Redlock and not consensus.
//   - Tokens that survive a clock skew larger than that gap, or any loss of
//     the counter with WithCounterTokens: then tokens restart lower (at 1
//     for counter tokens) and a token already handed out is handed out
//     again. Preflight reports a server that can lose the counter.
//   - Expiry on your clock. The server's clock times the TTL; a step of the
//     Redis host's clock shortens or lengthens every live lease.
//   - That an Acquire which returned an error took nothing. One whose reply
//     never came (a deadline, a lost connection) may have run on the server;
//     the Locker then releases that acquisition, by its own id and never
//     another holder's lock, once the server answers again, in the
//     background and for at most the attempt's TTL; it looks again until
//     then, as the acquire may land later, held on a connection that
//     failed while a new one got through (internal/clienttest's
//     TestLockAcquireThatTimedOutOnAFrozenServerDoesNotLeaveTheNameLocked
//     and TestLockAnAcquireDeliveredAfterItsGiveBackIsFreedLongBeforeItsTTL).
//
// # Keys
//
// For a name N and prefix P (default "lock:"), the lock is the string P{N}
// holding "<id> <owner>" (a random id per acquisition, which Release and
// Extend compare, and the Locker's owner label) with a PX expiry; the
// counter is the integer P{N}:token, which while the lock is held is the
// holder's token (a µs timestamp or above by default, a small integer with
// WithCounterTokens). An AcquireWait caller that finds the lock held puts a "*"
// in front of the value, and only a release of a lock so marked is
// published, on the channel P{N}:released: a release nobody waits for costs
// no PUBLISH. Both keys carry the hash tag {N}, so each script touches one
// Cluster slot. The scripts need Redis 7.0 or later.
//
// # ACL
//
// The least privilege a Redis user needs for this package, with the
// default prefix "lock:" (or WithPrefix("app:lock:") under "~app:*"):
//
//	ACL SETUSER app on >secret resetkeys ~lock:* resetchannels &lock:* -@all
//	    +evalsha +eval +evalsha_ro +eval_ro
//	    +get +set +pttl +del +pexpire +mget +time +publish
//	    +subscribe +info +config|get
//
// EVALSHA/EVALSHA_RO run the scripts and EVAL/EVAL_RO load one the server
// does not have yet. The commands a script runs are checked against the
// user's ACL too: SET, TIME and GET (Acquire), PTTL and MGET
// (Holder, a refused Acquire), PEXPIRE (Extend, renewals), DEL and PUBLISH
// (Release, ForceRelease). SUBSCRIBE is AcquireWait's, on the channel
// P{N}:released, which "&lock:*" covers; INFO and CONFIG GET are
// Preflight's only. WithCounterTokens needs +incr in place of +time.
// TestUserLimitedToTheDocumentedACLRunsEveryPathAndNeedsEveryCommand runs
// every path as exactly this user, and shows that each command is
// needed. Preflight reports, in Report.Refused, any of these the user may
// not run; a command refused inside a script comes back as Redis's error
// naming the script's line, not the command.
//
// # Clients
//
// A Locker runs on a Client: a Redis client through its adapter module,
// goredisadapter.New(rdb) for go-redis (lock.New(goredisadapter.New(rdb))),
// rueidisadapter.New(rc) for rueidis, valkeyadapter.New(vc) for valkey-go.
// A call ends by its context's deadline; on go-redis, only with
// ContextTimeoutEnabled set in the client's options: without it go-redis
// bounds a call by its ReadTimeout and WriteTimeout only. The Keeper's
// deadline fires on time either way.
package lock
