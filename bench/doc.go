// Package bench measures this project's primitives against the libraries
// users would pick instead, in one process, against one redis-server, and
// puts "the limit" beside them: what redis-benchmark, a C client with no
// library in the way, gets from the same server for a trivial script.
//
// Every figure is taken in rounds. Each round runs every case once, and the
// order of the libraries within a case alternates from one round to the
// next (A B C, then C B A), so a library does not always run first, on a
// cold server, or last, after the others have filled it. A row reports its
// median round and the ratio of its rate to the reference row of its table.
//
// How each figure is taken:
//
//   - Rate: operations completed by all goroutines divided by the wall time
//     from the start signal until the last goroutine stopped.
//   - Latency: every operation is timed on its own and recorded in a
//     log-linear histogram (1/32 relative resolution, about 3%); p50 and p99
//     come from it.
//   - Allocations per operation: the difference of runtime.MemStats.Mallocs
//     (and TotalAlloc for bytes) read just before the start signal and just
//     after the last goroutine stopped, divided by the operations. It counts
//     everything the process allocated meanwhile, the library, its client
//     (go-redis, or rueidis or valkey-go and their adapters) and the
//     harness (which allocates nothing per operation).
//
// This package is imported by no library module. Run it with `make bench`
// (cmd/bench); the results of a real run are in BENCHMARKS.md.
package bench
