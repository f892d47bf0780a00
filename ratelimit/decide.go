package ratelimit

import (
	"context"
	"fmt"
)

// callOne runs one limit's own script (counter.lua, gcra.lua or log.lua,
// which share this layout): KEYS[1] the limit's state; ARGV n, mode,
// pinned time, and capacity and the limit's two numbers packed; reply
// granted, allowed, remaining, retry-after µs and reset-after µs packed,
// unpacked by decodeInts into the slice decodeOne reads.
func (l *Limiter) callOne(ctx context.Context, m mode, key string, lim Limit, n int, pinned string) ([]int64, error) {
	var s scriptPair
	switch lim.alg {
	case AlgorithmSlidingLog:
		s = logScripts
	case AlgorithmSlidingCounter:
		s = counterScripts
	default:
		s = gcraScripts
	}
	keys := []string{base(l.cfg.prefix, key) + lim.id}
	packed, err := l.script(ctx, key, s.pick(m), keys, n, m.arg(), pinned, lim.packed).Text()
	if err != nil {
		return nil, l.callError(ctx, m, key, err)
	}
	reply, ok := decodeInts(packed, 5)
	if !ok {
		return nil, fmt.Errorf("ratelimit: %s on %q: unexpected reply %q", m, key, packed)
	}
	return reply, nil
}

// decodeInts unpacks a script's reply of n integers, big-endian in 8
// bytes each.
func decodeInts(s string, n int) ([]int64, bool) {
	if len(s) != 8*n {
		return nil, false
	}
	reply := make([]int64, n)
	for i := range reply {
		var v uint64
		for _, c := range []byte(s[8*i : 8*i+8]) {
			v = v<<8 | uint64(c)
		}
		reply[i] = int64(v)
	}
	return reply, true
}

// decodeOne turns callOne's reply into a Result.
func decodeOne(lim Limit, reply []int64) Result {
	res := Result{
		Allowed:    reply[1] == 1,
		Limit:      lim,
		Granted:    int(reply[0]),
		Remaining:  int(reply[2]),
		RetryAfter: ceilMillis(reply[3]),
		ResetAfter: ceilMillis(reply[4]),
	}
	if res.Allowed {
		res.RetryAfter = 0
	}
	return res
}
