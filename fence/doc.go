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
//	store, _ := fence.New(client)
//	err := store.Set(ctx, lease.Token, "account:42", "100")
//	if errors.Is(err, fence.ErrStale) {
//		// A newer holder has written: our lease is over. Stop.
//	}
//
// A Fencer binds a token to a Store, so a holder passes one value to the
// code that writes on its behalf. Set and HSet cover the common writes; Eval
// runs any Lua write of the caller's under the same check.
//
// # High-water marks
//
// By default each key has its own mark. WithScope makes all keys of a Store
// share one mark, named after the scope (typically the lock's name), so that
// a newer holder's first write, to any of those keys, fences older holders
// out of all of them. The marks have no TTL and must not be evicted: run
// Redis with maxmemory-policy noeviction.
// docs/decisions/0005-fence-high-water-scope.md records why.
//
// # Key layout
//
// This is the one place the names are stated; the code builds them in
// keys.go. Each mark lives in the Redis Cluster slot of the data it guards.
//   - A key with a hash tag, "{user:7}:profile": its mark is the key plus
//     ":fence:hw", "{user:7}:profile:fence:hw" (same tag, same slot).
//   - A key without one, "account:42": its mark is
//     "{account:42}:fence:hw:fence:hw", whose tag is the whole key and so
//     hashes like the key; the doubled suffix keeps it apart from the mark
//     of the tagged key "{account:42}", a different resource. A key with a
//     '}' but no hash tag gets no mark in its slot and is refused with
//     ErrCrossSlot.
//   - WithScope(name): one mark, "{name}:fence:hw"; Store.Key(k) is
//     "{name}:" + k, and every key written carries the tag {name}.
//   - Keys ending in ":fence:hw" are reserved for marks: writing one fails
//     with ErrInvalidKey.
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
//   - Tokens are only as good as their counter. If the lock's counter is
//     lost (evicted, flushed, a restart without persistence, a failover to
//     a replica that missed it), tokens are issued again, and a genuinely
//     stale holder whose token equals or exceeds the reissued ones is
//     accepted. The same holds if a mark is lost.
//   - Only writes made through a Store are checked. A plain SET from
//     anywhere else overwrites fenced data without a word.
//   - Tokens of different locks do not compare: fence each key (or scope)
//     with the tokens of one lock name only.
package fence
