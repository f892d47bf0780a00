// Package naiveratelimit holds rate limiters that are broken on purpose. They are the
// versions people write first, kept so that tests (and the demo) can show
// the failures package ratelimit exists to prevent. Do not use them.
//
//   - FixedWindow counts with INCR and then EXPIRE per wall-clock bucket: a
//     caller spends its allowance at the end of one bucket and again at the
//     start of the next (twice the limit within a few milliseconds), and a
//     crash between the two commands leaves a counter that never expires.
//   - SlidingWindow has the right algorithm (a sorted set of request
//     times) in three round trips: under concurrency every caller counts
//     before any caller records, so nearly everyone is admitted.
//
// Both read the caller's clock, so app servers whose clocks disagree see
// different windows.
package naiveratelimit
