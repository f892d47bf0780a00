// Package pgfence makes PostgreSQL rows and transactions refuse writes from
// stale lock holders, using the fencing tokens of package lock.
//
// What it does not guarantee: a write whose token is lower than one already
// accepted is refused, but a stale writer that arrives before any newer one is
// accepted. Fencing orders writes; it does not detect staleness.
package pgfence
