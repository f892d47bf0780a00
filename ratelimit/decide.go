package ratelimit

import (
	"context"
	"fmt"
)

// callOne runs one limit's own script (counter.lua, gcra.lua or log.lua,
// which share this layout): KEYS[1] the limit's state; ARGV n, mode,
// pinned time, capacity and the limit's two numbers; reply { granted,
// allowed, remaining, retry-after µs, reset-after µs }, read by decodeOne.
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
	reply, err := l.script(ctx, s.pick(m), keys, n, m.arg(), pinned, lim.params[0], lim.params[1], lim.params[2]).Int64Slice()
	if err != nil {
		return nil, l.callError(ctx, m, key, err)
	}
	if len(reply) != 5 {
		return nil, fmt.Errorf("ratelimit: %s on %q: unexpected reply %v", m, key, reply)
	}
	return reply, nil
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
