// Package leasecore is the core that lock and semaphore stand on, as etcd's
// Session stands under its Mutex and Election: a lease of a name, held by
// one of at most N holders, with a fencing token. Each primitive keeps its
// own scripts and public types; what they share is written here once:
//
//   - Core: a primitive on the core (its options, client, hook, logger and
//     its extend and release scripts), with the operations every lease has:
//     the input checks, Extend, Release, Keep, the run of a function under
//     a lease (WithLock, WithPermit), AcquireWait, Preflight and the report
//     of each to the hook and the logger. A primitive's Kind tells the
//     core its errors, how to read its lease and how to make its Event;
//   - Errors: the sentinels both define, named after the primitive, and the
//     checks of a name and a TTL (one TTL floor for both);
//   - Options: the options both take (prefix, owner, safety margin, renew
//     fraction, wait backoff) and their validation;
//   - Keeper: a lease's deadline, errors and the proof of a late lease,
//     over package keep's renewal loop (the project's one, which
//     ratelimit's reservations run too);
//   - Wait: the waiting loop (a wake-up subscription, a backoff, the
//     holder's expiry, the caller's deadline);
//   - GiveBack: the release, in the background, of a grant whose reply was
//     lost;
//   - Preflight: the durability and ACL checks, in the same words for both.
//
// It is internal: its names are not part of any published API.
package leasecore
