// Package lock is a lease-based lock on a single Redis server that hands out
// fencing tokens.
//
// Acquire takes a name for a TTL in one atomic script and returns a Lease
// whose Token comes from the name's counter (INCR): larger than every token
// issued for that name before. Release and Extend act only on a lease that
// still holds the lock (compare-and-delete, compare-and-expire), so a holder
// whose lease expired never deletes, prolongs or resurrects the next
// holder's. WithLock runs a function under the lock and renews it; a Keeper
// does the renewing for longer-lived holders; AcquireWait waits for a
// release, woken by a notification the release script publishes.
//
// Acquire is one round trip: it sets the lock (SET NX PX) and INCRs the
// counter, or, when the name is held, answers with the holder's token,
// owner and remaining TTL. Release and Extend are one round trip each.
//
// # What is guaranteed
//
//   - At most one live lease per name on the server, and tokens that strictly
//     increase across every acquisition of a name, for as long as the
//     counter key survives.
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
//   - Survival of a failover. Replication is asynchronous: a promoted replica
//     may lack the lock and have an older counter, and then reissues tokens.
//     WithReplicas narrows that window; it does not close it. This is not
//     Redlock and not consensus.
//   - Survival of the counter. It has no TTL by design; eviction (an
//     allkeys-* maxmemory-policy), FLUSHALL or a restart without persistence
//     lose it and tokens restart at 1. Preflight reports such a server.
//   - Expiry on your clock. The server's clock times the TTL; a step of the
//     Redis host's clock shortens or lengthens every live lease.
//
// # Keys
//
// For a name N and prefix P (default "lock:"), the lock is the string P{N}
// holding "<id> <owner>" (a random id per acquisition, which Release and
// Extend compare, and the Locker's owner label) with a PX expiry; the
// counter is the integer P{N}:token, which while the lock is held is the
// holder's token. An AcquireWait caller that finds the lock held puts a "*"
// in front of the value, and only a release of a lock so marked is
// published, on the channel P{N}:released: a release nobody waits for costs
// no PUBLISH. Both keys carry the hash tag {N}, so each script touches one
// Cluster slot. The scripts need Redis 7.0 or later.
//
// # Clients
//
// Any go-redis client fits (see Client). Set ContextTimeoutEnabled in the
// client's options: without it go-redis bounds a call by its ReadTimeout and
// WriteTimeout only, not by the context's deadline. The Keeper's deadline
// fires on time either way.
package lock
