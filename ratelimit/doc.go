// Package ratelimit limits how often a key may act. Every decision is one
// atomic Lua script on Redis (7.0 or later) that reads time from the
// server's clock (TIME), so app servers whose clocks disagree still share
// one window.
//
// Three algorithms, chosen per Limit:
//
//   - SlidingLog: exact. One sorted-set member per admitted request, so
//     memory per key is O(limit): fine for limits in the hundreds or low
//     thousands. Rejected requests are never recorded. Members are short
//     integers, unique even for many requests in one microsecond, so
//     nothing is undercounted.
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
// Limits combine in a Policy (say 10 per second and 1000 per day), checked
// and consumed in one script: a request counts against every limit or none,
// and Result.Limit names the one that bound. A single Limit runs its
// algorithm's own script, a Policy one script for any mix; both take the
// same arguments and give the same reply.
//
// Reserve, Reservation.Commit and Reservation.Cancel charge a cost known
// only after the work; Extend and Keep keep a reservation for work that
// outlives its ttl; ReserveWait waits for the budget (see "Reservations"
// below).
//
// Limiter.Preflight is a start-up check: it reports the server's version
// and the commands the ACL user may not run on the Limiter's keys.
//
// # Keys
//
// Each limit keeps its state in one Redis key of its own and nothing else:
// the prefix (DefaultPrefix, or WithPrefix), the user's key in a hash tag
// ('{', '}' and '%' escaped), then the algorithm's letter and every
// parameter: "ratelimit:{user:42}:l100:1m" (SlidingLog(100, time.Minute)),
// "…:c100:1m" (SlidingCounter), "…:g100:1s:20" (GCRA(100, time.Second, 20)).
// The window is written in the largest unit that divides it, to the
// microsecond.
//
//   - The counter's and GCRA's value is a string of a few bytes (a 7-byte
//     time and the counts, in binary): 88 bytes of MEMORY USAGE for a limit
//     of 100 when the whole key name fits in 28 bytes, the same as
//     go-redis/redis_rate.
//   - The log's is a sorted set of one member per request still in the
//     window.
//   - A limit used alone and in a Policy shares its key and state.
//   - Changing any parameter of a limit changes its key, so a deploy that
//     changes a limit starts every caller afresh under the new one; the old
//     keys expire on their own.
//
// # ACL
//
// The least privilege a Redis user needs for this package, with the
// default prefix "ratelimit:":
//
//	ACL SETUSER app on >secret resetkeys ~ratelimit:* resetchannels -@all
//	    +evalsha +eval +evalsha_ro +eval_ro +time +get +set +pexpire
//	    +zadd +zcount +zrange +zrangebyscore +zrem +zremrangebyscore +del
//	    +info
//
// EVALSHA/EVALSHA_RO run the scripts (the _RO ones for Peek) and EVAL/EVAL_RO
// load one the server does not have yet. The commands a script runs are
// checked against the user's ACL too: TIME everywhere; GET and SET (the
// counter, GCRA); ZRANGE, ZCOUNT, ZADD, ZREMRANGEBYSCORE, ZRANGEBYSCORE,
// ZREM and PEXPIRE (the log); DEL (Reset). No channel is used. INFO is
// Limiter.Preflight's only; Preflight reports, in Report.Refused, any of
// the others the user may not run on a key under the Limiter's prefix.
// TestUserLimitedToTheDocumentedACLDecidesEveryRuleAndNeedsEveryCommand
// runs Peek, AllowN, Allow, Take, Wait and Reset under each algorithm and a
// Policy as exactly this user, and shows that each command is needed.
//
// # Guarantees
//
//   - No limit admits more than it should under any concurrency (each
//     decision is one script).
//   - A rejected AllowN or Policy consumes nothing.
//   - A client that waits exactly Result.RetryAfter is admitted (it is
//     rounded up to the millisecond, never down) unless others spent the
//     allowance first.
//   - Time on a key never runs backwards: a call takes the latest of the
//     server's clock and the time its limits were last decided at, which
//     each limit's key keeps, rejections included (the counter and GCRA in
//     their state, the log as its newest member's score or, after a later
//     rejection, in that member's name). A server clock stepped back cannot
//     reopen a window, and waits are measured from the latest time.
//   - Every key written has a TTL on every path, rejections included.
//   - All keys of one call share the hash tag {key}, so it runs on Redis
//     Cluster.
//   - A call is decided at most once, with the client's default options.
//     A client sends a command again after its connection fails (go-redis's
//     MaxRetries); a decision that may have run is never sent again, and
//     the call returns an error matching ErrReplyLost instead. Under
//     connections killed while calls are in flight, what the server counted
//     lies between what callers were told was admitted and that plus the
//     calls that returned an error
//     (TestRateLimitEveryCallIsCountedOnceWhenTheClientResendsItAfterAKilledConnection,
//     in internal/clienttest, on every supported client).
//
// # Not guaranteed
//
//   - Availability when Redis is unreachable: the caller chooses to fail
//     open or closed (see package httprate).
//   - Limits that survive the loss of the server's data: a restart without
//     persistence, or a failover to a replica that had not received the
//     latest writes, forgets recent requests.
//   - A server clock stepped forward is taken at its word and ages requests
//     out early.
//   - The guard lives in the limit's key, so it goes when the key expires
//     with its state empty, and a clock stepped back after that is believed.
//   - On go-redis (goredisadapter), context deadlines bound a call only if
//     the client has Options.ContextTimeoutEnabled set; otherwise a stalled
//     server holds a call for the client's ReadTimeout.
//   - That a call which returned an error consumed nothing. A call whose
//     context ended (or whose connection was lost: ErrReplyLost) may
//     already be queued on the server, and runs when a frozen or slow
//     server wakes: it consumes quota although the caller got
//     context.DeadlineExceeded
//     (TestRateLimitAllowThatTimedOutOnAFrozenServerStillConsumesQuotaOnceItWakes,
//     in internal/clienttest).
//
// # Changing a limit on deploy
//
// A limit's parameters are part of its key, so a deploy that changes them
// starts every caller afresh by default: the new limit has no state, the
// old keys expire on their own within the old window. Choose explicitly:
//
//   - Keep the quotas: keep the parameters (a Limit renamed with Named
//     keeps its state). To change them without forgiving what callers
//     already used, decide with Policy{old, new} for one old window after
//     the deploy, then with new alone: every request counts against both,
//     so nobody gets more than the old limit allowed during the change;
//     the stricter of the two binds meanwhile.
//   - Drop the quotas now: Reset(ctx, key, old) forgets a key's state
//     under the old rule (and Reset(ctx, key, new) under the new one).
//
// There is no conversion of one limit's state into another's (a GCRA
// backlog is counted in units of its own emission interval; log members
// are named after n and the window).
//
// # Reservations: reserve now, settle the actual cost later
//
// When the cost is known only after the work (LLM tokens, bytes exported,
// query points), Reserve charges an estimate against every limit of a rule
// now, all or none as AllowN does, and returns a Reservation. The caller
// does the work, then Commit charges the actual cost and gives back the
// rest, or Cancel gives it all back.
//
//   - Every decision counts an outstanding reservation: it is charged like
//     any request until settled.
//   - Giving back is exact for the sliding log (its members go) and the
//     counter (its bucket is decremented while it still counts); for GCRA
//     it is what has not drained yet beyond the kept part, so no interleaving
//     exceeds a limit (ADR 0017 has the proof).
//   - An actual above the reservation charges the excess as Take would: what
//     fits, never past a limit (Result.Allowed false when not all did).
//   - A reservation not settled by its ttl (at most MaxReservationTTL) is
//     given back by the server's clock inside the next Reserve, Commit,
//     Cancel or Extend of the same key and rule: no sweeper, no goroutine, and a
//     crashed caller leaks nothing (TestCrashedReserverGivesBackByTheTTL).
//     A Commit past the ttl charges nothing and returns ErrExpired.
//   - Commit and Cancel are idempotent by the reservation's ID: retried, a
//     commit charges once (TestRetriedCommitChargesOnce).
//   - Work that outlives its ttl extends it: Extend moves the expiry on, a
//     Keeper (Keep) does so in the background until stopped, and its
//     Context ends if the reservation is lost. An expired reservation is
//     never revived. Each extension is one round trip.
//   - ReserveWait waits for the RetryAfter of each rejection, as WaitN
//     does, until the amount is reserved or the wait would pass the
//     context's deadline.
//   - A rule's reservations live in one sorted set beside its limits,
//     "ratelimit:{user:42}:rsv:<rule>", under the same hash tag; a settled
//     one stays there until its expiry, so keep ttls near the work's length
//     on keys that reserve at high rates.
//
// # Batching
//
// WithBatching (opt-in) sends the decisions goroutines make at the same
// moment in one round trip, as one script call per server (per primary on
// a Cluster) that makes each decision as its own script would, in order:
// the guarantees above hold per decision. A lone call is sent at once;
// calls that arrive while a batch is in flight go in the next. Under 50
// concurrent callers it cuts the server's CPU per decision several times
// over and multiplies the rate (BenchmarkAllowBatchedRules; ADR 0018).
// On a Ring, or a client that cannot tell which primary serves a key, the
// round trips are shared and every decision is its own script call.
//
// # Testing without Redis
//
// Package ratelimittest is an in-memory Limiter for unit tests: Allow,
// AllowN, Take, Peek, Wait, WaitN and Reset with this package's Results and
// errors, on a Clock the test moves instead of sleeping. It runs the
// scripts' arithmetic transcribed into Go, and
// TestDoubleAgreesWithTheRedisLimiterOnRandomTraces holds it to this
// Limiter's answers, field for field, against a real server. It satisfies
// httprate.Limiter, so a handler behind the middleware is tested without a
// server. It shares no state between processes and never fails but on bad
// input or an ended context: test failure handling against a real server.
//
// miniredis (an in-process Redis written in Go) runs lock and fence, but
// not this package's scripts: they need Lua's struct library, which
// miniredis lacks, and Peek's script declares flags, which it does not
// parse (measured on miniredis v2.40.0:
// TestOnMiniredisLockAndFenceWorkAndRatelimitsScriptsDoNot in examples/).
//
// WithServerTimeForTests replaces the server's clock with the caller's; it
// exists for tests only.
package ratelimit
