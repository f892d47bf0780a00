// Package luascripts is the runner the primitives of this project call their
// Lua scripts through. It holds no script: each primitive embeds its own
// (see docs/decisions/0012-each-primitive-owns-its-scripts.md).
//
// Run sends EVALSHA first and falls back to EVAL only when the server answers
// NOSCRIPT (after a restart, a SCRIPT FLUSH or a failover), so a script's
// body crosses the network once per server, not once per call. A script
// made with NewReadOnly runs with EVALSHA_RO and EVAL_RO, so the server
// refuses it if it writes and lets it run on a replica. RunPipelined does
// the same at the head of a pipeline.
//
// ServerVersion, Durability and RefusedScript read what every primitive's
// Preflight reports, so the start-up checks read it one way.
//
// It is internal: only this project's modules can import it, so that the
// published API is the primitives only. The primitives' constructors take
// go-redis's own client interfaces.
package luascripts
