// Package luascripts is the runner the primitives of this project call their
// Lua scripts through, and the contract (Client) between them and a Redis
// client. It holds no script: each primitive embeds its own (see
// docs/decisions/0012-each-primitive-owns-its-scripts.md).
//
//   - Client is everything the primitives ask of a Redis client: script
//     calls sent at most once or resendable, a batch of them in one round
//     trip, WAIT on a write's connection, a wake-up subscription, the
//     server facts Preflight reads, and which primary serves a key. Each
//     method's doc states its promises. goredisadapter, rueidisadapter and
//     valkeyadapter implement it; internal/clienttest's conformance suite
//     holds each to it (docs/decisions/0021-one-client-contract.md).
//   - Script.Run and Send send EVALSHA first and fall back to EVAL only
//     when the server answers NOSCRIPT (after a restart, a SCRIPT FLUSH or
//     a failover), so a script's body crosses the network once per server,
//     not once per call; and send again a call a migrating Cluster slot
//     refused. A script made with NewReadOnly runs with EVALSHA_RO and
//     EVAL_RO, so the server refuses it if it writes and lets it run on a
//     replica.
//   - Batcher lets the calls of many goroutines share round trips.
//   - ServerVersion, Durability and RefusedScript read what every
//     primitive's Preflight reports, so the start-up checks read it one
//     way.
//
// It is internal: only this project's modules can import it, so that the
// published API is the primitives and the adapters only, and the contract
// can change with them.
package luascripts
