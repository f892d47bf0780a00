// Package rueidisadapter runs every primitive of this project (lock,
// fence, fence/pgfence's Redis side, ratelimit, semaphore, election) on a
// rueidis client:
//
//	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}})
//	...
//	locker, err := lock.New(rueidisadapter.New(rc))
//
// New takes any rueidis client: of one server, of a Sentinel-monitored
// primary (ClientOption.Sentinel) or of a Cluster. The calls run on its
// own connections and options: its auto-pipelining, its Cluster routing,
// its retries. Closing it ends them.
//
// # What holds
//
// With rueidis's default options:
//
//   - A script that writes runs at most once per call. rueidis sends a
//     command again after a failed connection only if it is marked
//     retryable, and such a call never is: when its connection fails after
//     it was written, the call ends with an error matching the primitive's
//     ErrReplyLost (it may or may not have run, as after a timeout). A call
//     of a read-only or idempotent script is marked when its context has a
//     deadline, and rueidis sends it again within it, after a refused
//     dial too: against a Redis that is down it ends with the refused dial
//     within about a second (rueidis's longest backoff) of that deadline.
//     Without one it is not (rueidis would send it again until the
//     context ends), and it ends at its first refused dial.
//   - A batch (the primitives' WithBatching) is one DoMulti: one round
//     trip per server, in parallel across a Cluster's nodes, each call
//     routed by its first key's slot. rueidis follows MOVED and ASK; a
//     TRYAGAIN comes back to the primitive, which sends the call again. A
//     script that must not follow an ASK (ratelimit's batch.lua) goes on a
//     dedicated connection to its slot's node, which follows no redirect.
//   - WithReplicas' WAIT goes with its script on one connection: one from
//     rueidis's pool for blocking commands, on a Cluster a dedicated one
//     to the node of the script's key.
//   - Release notifications (AcquireWait) subscribe on a dedicated
//     connection; on a Cluster on one node, which gets every node's
//     messages.
//   - Replies read as on every client, RESP3's booleans as RESP2's. An
//     error reply keeps its code ("ERR ...", which rueidis's own error
//     drops) and wraps rueidis's *rueidis.RedisError, which errors.As
//     finds; a call on a closed client fails with an error that says so.
//
// # What does not
//
//   - A call's context does not bound its wait for a connection that
//     another call is dialling. rueidis dials a connection again after it
//     failed (a call whose deadline passed on a frozen server breaks it),
//     and the calls that need it wait for that dial, bounded by the dial's
//     own timeout (Dialer.Timeout, 5 s by default, or the dialling call's
//     deadline if sooner), not by their contexts: against a frozen server a
//     call may take up to the dial timeout. Set Dialer.Timeout to the
//     longest a caller can wait (a middleware's Timeout, say, plus a round
//     trip). The give-back of an acquire whose reply never came dials
//     within what that acquire was allowed (its first try takes no longer
//     than the acquire's context did); a Keeper's renewal may take until
//     the lease's deadline.
//   - Nor does it bound a subscription's dial on one server or a
//     Sentinel's primary (rueidis dials a dedicated connection without a
//     context): AcquireWait against a frozen server may wait the dial
//     timeout before its first try. On a Cluster the dial is the
//     context's.
//   - ClientOption.ConnLifetime breaks the at-most-once guarantee: rueidis
//     sends again every call whose connection reached its lifetime before
//     the call's reply came (a server slower than a second to answer), the
//     written ones too. Leave it unset.
//   - On a Cluster, a primitive cannot ask which node serves a key (rueidis
//     keeps its slot table to itself), so ratelimit's batching sends each
//     decision as its own call, in the batch's round trip, not one
//     batch.lua call per node.
package rueidisadapter
