// Package fence makes Redis keys refuse writes from stale lock holders.
//
// A fencing token (package lock hands one out with every lease) protects
// nothing until the resource compares it. Every write of a Store carries a
// token and runs as one Lua script that compares the token with the highest
// one accepted so far (the key's high-water mark), refuses the write if the
// token is lower, and otherwise records the token and writes. Check and
// write are one atomic step, so no write can slip in between. Equal tokens
// are accepted: the current holder may write as often as it likes.
//
//	func writeBalance(ctx context.Context, rdb *redis.Client, token int64) error {
//		store, err := fence.New(goredisadapter.New(rdb))
//		if err != nil {
//			return err
//		}
//		err = store.Set(ctx, token, "balance:42", "100")
//		var stale *fence.StaleError
//		if errors.As(err, &stale) {
//			log.Printf("lease over: token %d < %d, a newer holder has written; stop", stale.Token, stale.Highest)
//		}
//		return err
//	}
//
// A Store takes a Client: a Redis client through its adapter module,
// goredisadapter.New(rdb) for go-redis, rueidisadapter.New(rc) for
// rueidis, valkeyadapter.New(vc) for valkey-go; one server, a
// Sentinel-monitored primary or a Cluster alike.
//
// A Fencer binds a token to a Store, so a holder passes one value to the
// code that writes on its behalf. Set and HSet cover the common writes; Eval
// runs any Lua write of the caller's under the same check. WithBatching
// shares round trips among the writes goroutines make at the same moment.
//
// Store.Preflight is a start-up check: it reports the server's version, an
// eviction policy or a lack of persistence that could lose a high-water
// mark, and the commands the ACL user may not run.
//
// WithHook receives every write's verdict (a refused stale write is the
// event that shows fencing at work) and WithLogger logs the refusals; by
// default nothing is observed or logged.
//
// # High-water marks
//
// By default each key has its own mark. WithScope makes all keys of a Store
// share one mark, named after the scope (typically the lock's name), so that
// a newer holder's first write, to any of those keys, fences older holders
// out of all of them. The marks have no TTL and must not be evicted: a
// Store refuses every write, with ErrEvictingPolicy, on a server whose
// maxmemory-policy is allkeys-*, which under memory pressure evicts them
// and then accepts the stale write a mark refused. It reads the policy
// (INFO memory) at its first write and again at most every 30 seconds.
// noeviction and the volatile-* policies, which evict only keys with a
// TTL, keep the marks. docs/decisions/0029-eviction.md records why.
// docs/decisions/0005-fence-high-water-scope.md records why.
//
// # Key layout
//
// This is the one place the names are stated; keys.go builds them. A mark
// starts with the name of what it guards, so an ACL key pattern that covers
// the data ("~app:*") covers its mark, and it lives in the data's Redis
// Cluster slot.
//   - A key with a hash tag, "app:{user:7}:profile": its mark is the key
//     plus ":fence", "app:{user:7}:profile:fence" (same tag, same slot).
//   - A key without one, "app:x": its mark is "app:x:fence{app:x}", whose
//     tag is the whole key and so hashes like the key, and which is not
//     the mark of the tagged key "{app:x}" ("{app:x}:fence"), a different
//     resource. A key with a '{' or '}' but no hash tag ("a{b") gets no
//     mark in its slot under its own name and is refused with ErrCrossSlot:
//     give it a hash tag.
//   - WithScope("job"): one mark, "{job}:fence"; Store.Key(k) is
//     "{job}:" + k. WithScope("app:{job}"): one mark, "app:{job}:fence";
//     Store.Key(k) is "app:{job}:" + k. Every key written carries the
//     scope's tag, {job}.
//   - Names of marks are reserved: writing a key that is one (a tagged key
//     ending in ":fence", or "k:fence{k}") fails with ErrInvalidKey.
//
// Development versions before this layout named marks differently (see
// CHANGELOG.md); marks written by them are not read.
//
// # ACL
//
// The least privilege a Redis user needs for this package, with every key
// of the application under "app:":
//
//	ACL SETUSER app on >secret resetkeys ~app:* resetchannels -@all
//	    +evalsha +eval +evalsha_ro +eval_ro +get +set +hset +hget
//	    +info +config|get
//
// EVALSHA/EVALSHA_RO run the scripts, EVAL/EVAL_RO load one the server does
// not have yet; GET, SET and HSET are run inside the write scripts, GET and
// HGET inside the reads. INFO memory tells a Store the server's
// maxmemory-policy before its first write (see below); a user without INFO
// is not refused, and is left unchecked. CONFIG GET is Store.Preflight's
// only (a refused CONFIG GET is reported, not an error); Preflight reports, in
// Report.Refused, any of the others the user may not run on the keys it is
// given. A script given to Store.Eval needs the commands it
// runs as well. A command the user may not run comes back from the script
// as a server error, as any script error does (see Store.Eval).
//
// # What is guaranteed, and what is not
//
// Guaranteed: once a write with token t has been accepted, no write with a
// token lower than t is accepted for the same mark, ever, as long as the
// mark survives.
//
// Not guaranteed:
//   - Fencing orders writes; it does not detect staleness. A stale holder
//     that writes before the new holder has written anything is accepted,
//     because the resource has not yet seen a higher token. Only from the
//     new holder's first write on is the stale one refused.
//   - Tokens are only as good as the lock that issues them. Package lock's
//     default tokens follow the server's clock, so a lost counter issues no
//     token again unless the servers' clocks differ by more than the gap
//     around the loss; with lock.WithCounterTokens any lost counter
//     (evicted, flushed, a restart without persistence, a failover to a
//     replica that missed it) issues tokens again, and a genuinely stale
//     holder whose token equals or exceeds the reissued ones is accepted.
//     The same holds if a mark is lost.
//   - That a write which returned an error did not happen. A write whose
//     context ended may already be queued on the server and lands when a
//     frozen or slow server wakes, moving the mark with it, on every
//     client (internal/clienttest's
//     TestFencedWriteThatTimedOutOnAFrozenServerStillLandsOnceItWakes):
//     read the key or the mark again before acting on a timeout.
//   - Only writes made through a Store are checked. A plain SET from
//     anywhere else overwrites fenced data without a word.
//   - Tokens of different locks do not compare: fence each key (or scope)
//     with the tokens of one lock name only.
package fence
