// Package semaphore is a counting semaphore on a single Redis server whose
// permits are leases that carry fencing tokens: at most N holders of a
// name at a time, each permit expiring by the server's clock if its holder
// dies, and each token larger than every token the semaphore granted
// before.
//
// Acquire takes one permit of a name for a TTL in one atomic script, given
// the capacity on each call; AcquireWait waits for one; Release and Extend
// act only on a live permit; WithPermit runs a function under a permit,
// renewed as Keep renews one, as package lock's WithLock and Keep do.
// Holders lists the live permits. Package httpsem limits the requests in
// flight per key with it.
//
// # What is guaranteed
//
//   - At most capacity live permits per name at any instant of the
//     server's clock, counted by the acquire script itself (a call with a
//     lower capacity is refused while more are live; the holders above it
//     keep their permits until they release or expire).
//   - Nothing to sweep and no leak: a permit is live until its expiry by
//     the server's TIME, so a crashed holder's place is free again within
//     its TTL. Expired permits are dropped by later acquires, and the keys
//     of a semaphore expire with its longest permit, except the counter.
//   - One call, one permit: the permit's id is chosen before the call is
//     sent, so a client resending an acquire whose reply it lost gets
//     the same permit back, not a second one.
//   - Tokens that strictly increase across every permit of a name, also
//     across a loss of the counter (FLUSHALL, eviction, a restart without
//     persistence, a failover to a replica that missed the last grants),
//     provided the new server's clock is behind the old one's by less than
//     the time between the last grant on the old server and the first on
//     the new one. A token is max(counter + 1, the server's time in µs),
//     the hybrid token of package lock.
//   - An expired permit stays expired: Extend never brings one back and
//     Release reports false for it.
//   - AcquireWait is woken within milliseconds of a release and, when a
//     notification is lost, tries again within the WithWaitBackoff maximum
//     or at the earliest permit's expiry, whichever is sooner.
//
// # What is not
//
//   - That at most N processes act as holders. A permit can expire while
//     its holder still runs (a GC pause, a frozen VM) and nothing in Redis
//     can stop it. The token lets a resource refuse the stale holder's
//     writes, and only if the resource checks it (package fence, pgfence).
//   - That tokens order the N holders' writes to one shared resource the
//     way you may want. A fence admits tokens in increasing order, so of
//     live holders writing one fenced key, an older permit is refused as
//     soon as a newer one has written: one fence across a semaphore makes
//     it "the newest holder wins". Fence what one permit owns — the job,
//     row or account the holder works on — so that a stale holder of that
//     item is refused once the item's next holder writes, and the other
//     live holders are not (TestOneFenceSharedByLiveHoldersRefusesTheOlder).
//   - Survival of permits across a failover: replication is asynchronous,
//     and a promoted replica may lack permits and grant their places again:
//     twice the capacity after one such failover, for up to one TTL. The
//     tokens still go up
//     (TestFailoverToALaggingReplicaAdmitsTwiceTheCapacityForUpToOneTTL).
//   - That an Acquire which returned an error took nothing. One whose reply
//     never came may have run, on a frozen server once it wakes; the Issuer
//     then gives that permit back, by its own id and never another
//     holder's, once the server answers again, in the background and for
//     at most the attempt's TTL; it looks again until then, as the acquire
//     may land later, held on a connection that failed while a new one got
//     through (internal/clienttest's
//     TestSemaphoreAcquireThatTimedOutOnAFrozenServerIsGivenBackOnceTheServerWakes
//     and TestSemaphoreAnAcquireDeliveredAfterItsGiveBackIsFreedLongBeforeItsTTL,
//     on every client).
//   - Fairness: waiters woken by a release race, and one of them wins.
//   - Expiry on your clock: a step of the Redis host's clock shortens or
//     lengthens every live permit.
//
// # Keys
//
// For a name N and prefix P (default "semaphore:"), all keys carry the
// hash tag {N}, so each script touches one Cluster slot:
//
//   - P{N}: a sorted set of the live permits' ids, scored by expiry (the
//     server's TIME in µs).
//   - P{N}:holders: a hash, permit id → "<token> <granted µs> <owner>".
//   - P{N}:token: the last token granted, with no TTL.
//   - P{N}:waiting: present while an AcquireWait caller waits; a release
//     publishes on the channel P{N}:released only then, so a release nobody
//     waits for costs no PUBLISH.
//
// The scripts need Redis 7.0 or later.
//
// # ACL
//
// The least privilege a Redis user needs for this package, with the
// default prefix (or WithPrefix("app:semaphore:") under "~app:*"):
//
//	ACL SETUSER app on >secret resetkeys ~semaphore:* resetchannels &semaphore:* -@all
//	    +evalsha +eval +evalsha_ro +eval_ro
//	    +time +zrange +zcount +zscore +zadd +zrem +hset +hdel +hmget
//	    +get +set +del +pexpire +publish +subscribe +info +config|get
//
// The scripts' commands are checked against the user's ACL as lock's are;
// SUBSCRIBE is AcquireWait's, INFO and CONFIG GET Preflight's, which
// reports in Report.Refused any command the user may not run.
// TestUserLimitedToTheDocumentedACLRunsEveryPathAndNeedsEveryCommand runs
// every path as exactly this user and shows that each command is needed.
//
// # Clients
//
// New takes a Client, your Redis client through its adapter module:
// goredisadapter.New(rdb) for go-redis (set ContextTimeoutEnabled, so that
// a context's deadline bounds each call), rueidisadapter.New(rc) or
// valkeyadapter.New(vc); one server, a Sentinel primary or a Cluster alike.
package semaphore
