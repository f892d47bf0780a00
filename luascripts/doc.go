// Package luascripts holds the Lua scripts of every primitive in this project
// and the one runner that calls them.
//
// Each script is a .lua file embedded with go:embed and exposed as a *Script.
// Run sends EVALSHA first and falls back to EVAL only when the server answers
// NOSCRIPT (after a restart, a SCRIPT FLUSH or a failover), so the script body
// crosses the network once per server, not once per call.
//
// Every script here is one atomic call, reads time only from the server (TIME)
// where time matters, and touches only keys passed in KEYS that share one hash
// tag, so it can run on Redis Cluster. Scripts block the server while they
// run: each is kept to O(log N) work plus a bounded trim.
//
// The package is shared by the other modules of this repository; it is not
// meant to be used on its own.
package luascripts
