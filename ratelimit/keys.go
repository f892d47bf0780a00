package ratelimit

import (
	"strconv"
	"strings"
	"time"
)

// The key layout is stated once, in the package documentation ("Keys");
// this file builds it.

// base returns the part of every key of a call that the user's key
// determines: the prefix, then the key in its hash tag ("ratelimit:{user:42}:").
// All keys of one call share the hash tag, so Redis Cluster puts them in
// one slot and one script may touch them all.
func base(prefix, key string) string {
	return prefix + "{" + tagEscaper.Replace(key) + "}:"
}

// tagEscaper keeps a user's key from ending or emptying the hash tag it is
// placed in ("}" would give the tag "{}", which Redis ignores, scattering
// the call's keys over slots). Escaping '%' as well keeps it one-to-one, so
// distinct keys keep distinct limits.
var tagEscaper = strings.NewReplacer("%", "%25", "{", "%7B", "}", "%7D")

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

// letter is an algorithm's letter in key names and in the policy script's
// arguments.
func (a Algorithm) letter() string {
	switch a {
	case AlgorithmSlidingLog:
		return "l"
	case AlgorithmSlidingCounter:
		return "c"
	default:
		return "g"
	}
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
