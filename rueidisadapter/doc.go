// Package rueidisadapter runs every primitive of this project (lock,
// fence, fence/pgfence's Redis side, ratelimit, election, semaphore) on a
// rueidis client.
//
// The primitives take go-redis clients. New returns a *redis.Client that
// opens no connection of its own: a hook sends each of its commands, and
// each of its pipelines, through the rueidis client, and turns the replies
// back into go-redis's. So each primitive runs its one code path, the one
// its tests hold to, with rueidis's connections, auto-pipelining, Sentinel
// and Cluster routing underneath:
//
//	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}})
//	...
//	client, err := rueidisadapter.New(rc)
//	...
//	locker, err := lock.New(client)
//
// What holds, as on go-redis:
//
//   - Every call is counted once. rueidis sends a command again after a
//     failed connection only if it is marked retryable, and then until its
//     context ends; the adapter marks a call that may run twice (read-only
//     scripts, idempotent ones, WAIT) when its context has a deadline, so
//     that a call without one returns while the server is down. A script
//     that writes is never sent twice (the call ends with an error
//     instead, and may or may not have run, as with a timeout). MOVED, ASK
//     and TRYAGAIN, which prove the command did not run, are followed or
//     retried.
//   - Scripts are sent as EVALSHA, with EVAL after NOSCRIPT; errors match
//     as they do on go-redis (redis.Nil, NOSCRIPT, NOPERM and WRONGPASS
//     replies as redis.Error, lock.ErrRedisTooOld), context errors are
//     the context's.
//   - Release notifications (lock's and semaphore's AcquireWait) subscribe
//     through rueidis; WithReplicas' WAIT shares its write's connection.
//   - On a Cluster, rueidis routes each call by its first key's slot.
//     ratelimit's batching sends each decision as its own call there (in
//     one round trip per node), not as one script call per node.
//
// What does not: a call's context does not bound a wait for a connection
// that another call is dialling. rueidis dials a connection again after
// it failed (a call whose deadline passed on a frozen server breaks it),
// and the calls that need it wait for that dial, bounded by the dial's
// own timeout (5 s by default), not by their contexts: against a frozen
// server a call may take up to the dial timeout. Set the rueidis client's
// Dialer.Timeout to the longest a caller can wait (a middleware's Timeout,
// say, plus a round trip). The returned client is for the primitives. It answers
// the commands they send and the common commands of strings, hashes,
// sorted sets and server administration; a reply type it does not convert
// is an error naming the command. A go-redis hook goes on it with this
// package's AddHook, not the client's own (whose hooks would run after the
// adapter's, which ends the chain: a client given one that way fails each
// call, saying so); or instrument the rueidis client. Subscribe on it, and
// transactions (TxPipeline, Watch), fail with ErrUnsupported. Closing it
// closes nothing: close the rueidis client.
package rueidisadapter
