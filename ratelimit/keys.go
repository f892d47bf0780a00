package ratelimit

import (
	"strconv"
	"time"
)

// The key layout is stated once, in the package documentation ("Keys");
// this file names a limit's state, and wire.go puts a call's keys
// together (base).

// limitID names a limit's state after the user's key: the algorithm's
// letter, n, the window, and for GCRA the burst ("c100:1m", "l5:1h",
// "g100:1s:20"). It holds every parameter exactly (the window to the
// microsecond the scripts count in), so a limit whose parameters change
// starts afresh instead of misreading old state, and it is short: key
// names count in the memory per key.
func limitID(alg Algorithm, n int, window time.Duration, burst int) string {
	id := alg.letter() + strconv.Itoa(n) + ":" + shortDuration(window)
	if alg == AlgorithmGCRA {
		id += ":" + strconv.Itoa(burst)
	}
	return id
}

// shortDuration writes d, truncated to the microsecond, in the largest
// unit that divides it: "1h", "90m", "1s", "250ms", "1500us". Each
// duration has one spelling, and distinct durations distinct ones.
func shortDuration(d time.Duration) string {
	us := d.Microseconds()
	for _, u := range []struct {
		us   int64
		name string
	}{{3_600_000_000, "h"}, {60_000_000, "m"}, {1_000_000, "s"}, {1_000, "ms"}} {
		if us != 0 && us%u.us == 0 {
			return strconv.FormatInt(us/u.us, 10) + u.name
		}
	}
	return strconv.FormatInt(us, 10) + "us"
}
