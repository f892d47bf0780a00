// Package ratelimit limits how often a key may act. Every decision is one
// atomic Lua script on Redis that reads time from the server's clock (TIME),
// so app servers whose clocks disagree still share one window.
//
// Three algorithms, chosen per Limit:
//
//   - SlidingLog: exact. One sorted-set member per admitted request, so
//     memory per key is O(limit): fine for limits in the hundreds or low
//     thousands. Rejected requests are never recorded. Members are
//     "<time>-<per-key sequence>", unique even for many requests in one
//     microsecond, so nothing is undercounted.
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
//     memory per key.
//
// Limits combine in a Policy (say 10 per second and 1000 per day), checked
// and consumed in the same script: a request counts against every limit or
// none, and Result.Limit names the one that bound.
//
// Guaranteed: no limit admits more than it should under any concurrency (each
// decision is one script); a rejected AllowN or Policy consumes nothing; a
// client that waits exactly Result.RetryAfter is admitted (it is rounded up
// to the millisecond, never down) unless others spent the allowance first;
// time on a key never runs backwards (the script keeps the latest time it
// saw per key, so a server clock stepped back cannot reopen a window); every
// key written has a TTL on every path, rejections included; all keys of one
// call share the hash tag {key}, so it runs on Redis Cluster.
//
// Not guaranteed: availability when Redis is unreachable (the caller chooses
// to fail open or closed; see package httprate); limits that survive the loss
// of the server's data (a restart without persistence or a failover to a
// replica that had not received the latest writes forgets recent requests);
// a server clock stepped forward is taken at its word and ages requests out
// early. Context deadlines bound a call only if the go-redis client has
// Options.ContextTimeoutEnabled set; otherwise a stalled server holds a call
// for the client's ReadTimeout.
//
// WithPinnedClockForTests replaces the server's clock with the caller's; it
// exists for tests only. Package naive keeps the broken limiters these
// replace, for tests and demonstrations.
package ratelimit
