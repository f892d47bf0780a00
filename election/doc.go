// Package election elects one leader among processes with a self-renewing
// lease from package lock; the lease's fencing token is the term's epoch.
//
// What it does not guarantee: that only one process believes it leads. A
// leader whose process is paused keeps believing it leads until it runs again
// and checks, however long that takes. Every side effect must carry the epoch
// to a resource that refuses older ones.
package election
