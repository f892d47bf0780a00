// Package ratelimit limits how often a key may act. Every decision is one
// atomic Lua script on Redis that reads time from the server's clock (TIME),
// so app servers whose clocks disagree still share one window.
//
// Three algorithms, chosen per Limit:
//
//   - SlidingLog: exact. One sorted-set member per admitted request, so
//     memory per key is O(limit): fine for limits in the hundreds or low
//     thousands. Rejected requests are never recorded. Members are
//     "<time>-<count>", unique even for many requests in one microsecond,
//     so nothing is undercounted.
//   - SlidingCounter: O(1) memory per key, for limits in the thousands and
//     up. It counts fixed buckets of one window and weights the previous
//     bucket's count by how much of it still overlaps the sliding window,
//     which assumes that bucket's requests were spread evenly. Worst case:
//     when the previous bucket's requests all came at its very end, at
//     elapsed time e into the current bucket it admits up to limit·e/window
//     more while those are still inside the true window, so a true sliding
//     window can hold up to 2·limit−1 (measured: 199 for a limit of 100). It
//     errs the other way when they came early. On a 60s generated trace run
//     above the limit we measured at most 7% over the limit in any window
//     and totals within 1% of the exact log.
//   - GCRA: a token bucket with a burst (rate n per period, burst b), O(1)
//     memory per key, counted in exact integers (so burst × period in
//     microseconds ÷ gcd(period in microseconds, n) must stay below 2^53).
//
// Keys: each limit keeps its state in one Redis key of its own and nothing
// else, named after the user's key and every parameter of the limit:
// "ratelimit:{user:42}:log:100:1m0s", "…:counter:100:1m0s",
// "…:gcra:100:1m0s:20". The counter's and GCRA's is a string of a few bytes
// (a 7-byte time and the counts, in binary): 88 bytes of MEMORY USAGE for a
// limit of 100 when the whole key name fits in 30 bytes (16 more past it),
// the same as go-redis/redis_rate. The log's is a sorted set of one member
// per request still in the window.
//
// Limits combine in a Policy (say 10 per second and 1000 per day), checked
// and consumed in the same script: a request counts against every limit or
// none, and Result.Limit names the one that bound.
//
// Guaranteed: no limit admits more than it should under any concurrency (each
// decision is one script); a rejected AllowN or Policy consumes nothing; a
// client that waits exactly Result.RetryAfter is admitted (it is rounded up
// to the millisecond, never down) unless others spent the allowance first;
// time on a key never runs backwards (a call takes the latest of the
// server's clock and the time its limits were last decided at, which each
// limit's key keeps, rejections included: the counter and GCRA in their
// state, the log as its newest member's score or, after a later rejection,
// in that member's name; so a server clock stepped back cannot reopen a
// window, and waits are measured from the latest time); every key written
// has a TTL on every path, rejections included; all keys of one call share
// the hash tag {key}, so it runs on Redis Cluster.
//
// Not guaranteed: availability when Redis is unreachable (the caller chooses
// to fail open or closed; see package httprate); limits that survive the loss
// of the server's data (a restart without persistence or a failover to a
// replica that had not received the latest writes forgets recent requests);
// a server clock stepped forward is taken at its word and ages requests out
// early; the guard lives in the limit's key, so it goes when the key expires
// with its state empty, and a clock stepped back after that is believed.
// Context deadlines bound a call only if the go-redis client has
// Options.ContextTimeoutEnabled set; otherwise a stalled server holds a call
// for the client's ReadTimeout.
//
// WithPinnedClockForTests replaces the server's clock with the caller's; it
// exists for tests only. Package naive keeps the broken limiters these
// replace, for tests and demonstrations.
package ratelimit
