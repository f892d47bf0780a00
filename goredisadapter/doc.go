// Package goredisadapter runs every primitive of this project (lock,
// fence, fence/pgfence's Redis side, ratelimit, semaphore, election) on a
// go-redis v9 client:
//
//	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
//	...
//	locker, err := lock.New(goredisadapter.New(rdb))
//
// New takes a *redis.Client (one server, or a Sentinel-monitored primary
// from redis.NewFailoverClient), a *redis.ClusterClient or a *redis.Ring.
// The calls run on that client's own connections, with its options and
// its hooks (tracing and metrics hooks see them as they see any command).
//
// What holds, with go-redis's default options:
//
//   - A script that writes runs at most once per call. go-redis sends a
//     command again after a failed connection (MaxRetries); such a script
//     is sent with an argument that knows how often it was written, and a
//     second write of it is a no-op: the call ends with an error matching
//     the primitive's ErrReplyLost (it may or may not have run, as after a
//     timeout). A refusal that proves the script did not run (MOVED, ASK,
//     TRYAGAIN, LOADING, READONLY, ...) is sent again as go-redis sends
//     any command again. Read-only and idempotent scripts are sent as
//     plain commands, and go-redis retries them as it retries any.
//   - Each call is a pipeline, even alone (only a pipeline records each
//     attempt's reply, which the at-most-once argument reads); pipelines
//     are reused, so that a call costs what a plain command does.
//   - On a Cluster, a batch (the primitives' WithBatching) is split into
//     one pipeline per primary, sent in parallel; WithReplicas' WAIT goes
//     on the connection of its write, to the primary of the write's key.
//   - Release notifications (AcquireWait) subscribe with go-redis's own
//     Subscribe.
//   - On a Ring, WAIT cannot follow its write (a Ring routes by a hash it
//     does not expose): lock's WithReplicas fails with ErrRingWait there.
//   - Errors match as they do on go-redis: an error reply still matches
//     redis.Error, a closed client redis.ErrClosed.
//
// Set ContextTimeoutEnabled in the client's options, so that a call to a
// frozen server ends at its context's deadline and not only at
// ReadTimeout. A server that refuses connections is reported with the
// refused dial in the call's error chain once go-redis gives up dialling:
// from go-redis v9.16 on, with its defaults, about 3.4 s per call
// (DialerRetries dials per attempt, 100 ms apart, and a pipeline pays
// that twice); a shorter deadline ends the call with the context's error
// alone. DialerRetries: 1 reports it in about 0.1 s.
package goredisadapter
