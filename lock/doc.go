// Package lock is a lease-based lock on a single Redis server that hands out
// fencing tokens.
//
// Acquiring a name returns a lease with a token from a counter that only ever
// grows, across every acquisition of that name. Release and Extend act only
// on a lease that is still held (compare-and-delete, compare-and-expire), so a
// holder whose lease expired can never delete or prolong the next holder's.
//
// What it does not guarantee: that only one process acts as holder at a time.
// A lease can expire while its holder still runs (a pause, a slow call), and
// nothing in Redis can stop that process. The token is what lets the resource
// refuse the stale holder's writes; see package fence. One Redis server is a
// single point of failure, and asynchronous replication can lose a lock and
// move the token counter backwards on failover.
package lock
