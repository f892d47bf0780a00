// Package ratelimittest is an in-memory ratelimit.Limiter for tests: the
// same decisions as the Redis scripts, with no server.
//
// A Limiter from New has the methods of *ratelimit.Limiter that decide
// (Allow, AllowN, Take, Peek, Wait, WaitN and Reset) and gives, for every
// algorithm, Policy and mode, the Result and the error the Redis Limiter
// gives on the same calls at the same instants: it runs the scripts'
// arithmetic transcribed into Go (ratelimit/internal/model), and
// TestDoubleAgreesWithTheRedisLimiterOnRandomTraces holds the two to
// field-for-field equal answers on random traces against a real server.
// It satisfies httprate.Limiter, so a handler behind the middleware can be
// unit-tested without Redis.
//
// Reserve holds an amount as ratelimit.Limiter.Reserve does, and its
// Reservation settles (Commit, Cancel), extends (Extend) and is released
// at its expiry as the scripts do it (reserve.lua, settle.lua,
// extend.lua, transcribed in the same model);
// TestDoubleReservesAsTheRedisLimiterOnRandomTraces holds it to the Redis
// Limiter's answers. It is a type of its own, not a
// *ratelimit.Reservation: code that reserves reaches both through an
// interface of its own. It has no Keep: its Clock moves only when told, so
// a test extends by hand.
//
// Time is the Clock given WithClock, which only moves when a test moves
// it, so tests are deterministic; without one it is the process's clock.
// As on the server, time on a key never runs backwards (a Clock set back
// is met by each key's latest time), and state expires when its key would
// on Redis: when it is empty, on the Limiter's clock.
//
// What it does not do: share state between processes or Limiters (each
// Limiter is a server of its own), fail (no call returns an error but
// for bad input and a context already ended), or take ratelimit's
// options (a prefix, a deny cache, batching, hooks and loggers change
// nothing a decision says, and are not offered).
package ratelimittest
