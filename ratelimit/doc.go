// Package ratelimit limits how often a key may act, with limiters that run as
// one atomic script each on Redis and read time from the server's clock.
//
// What it does not guarantee: availability when Redis is unreachable (the
// caller chooses to fail open or closed), or limits that survive the loss of
// the server's data. The sliding-window log costs memory in proportion to the
// limit for every key.
package ratelimit
