// Package clienttest holds the tests every Redis client the primitives run
// on must pass, run once on each (go-redis, rueidis, valkey-go) through its
// adapter:
//
//   - the conformance suite of the runner's contract (luascripts.Client):
//     a write sent at most once when its connection drops right after it,
//     the refusals that prove a script did not run sent again, WAIT on the
//     write's connection, wake-ups, Cluster routing and batch splitting,
//     deadlines, and errors as users match them;
//   - the primitives' tests whose outcome depends on the client: killed
//     connections counted once, a frozen server, a Cluster, wake-ups,
//     failovers.
//
// Every other test of a primitive runs once, on go-redis, in the
// primitive's own module. A test here takes a kind (eachClient) and makes
// its clients with it; that is the convention that puts a test on every
// client. This module is for tests only: it is never released, so that the
// primitives' and the adapters' go.mod files need not name the other
// clients.
package clienttest
