package ratelimittest

import (
	"time"

	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/internal/model"
)

// result is the Result of reply r for rule, as ratelimit builds it from a
// script's reply: for a Policy, the binding limit's, with every limit's in
// Each.
func result(r model.Reply, rule ratelimit.Rule) ratelimit.Result {
	if lim, ok := rule.(ratelimit.Limit); ok {
		return limitResult(r, 0, lim)
	}
	p := rule.(ratelimit.Policy)
	each := make([]ratelimit.Result, len(p))
	bind := 0
	for i := range p {
		each[i] = limitResult(r, i, p[i])
		each[i].Allowed = r.Limits[i].Allowed
		// The binding limit: when allowed, the one with the fewest left;
		// when rejected, the one to wait for longest.
		b := each[bind]
		if r.Allowed {
			if each[i].Remaining < b.Remaining {
				bind = i
			}
		} else if !each[i].Allowed && (b.Allowed || each[i].RetryAfter > b.RetryAfter) {
			bind = i
		}
	}
	res := each[bind]
	res.Allowed, res.Each = r.Allowed, each
	if r.Allowed {
		res.RetryAfter = 0
	}
	return res
}

// limitResult is limit i's part of r as a Result, with the call's Allowed.
func limitResult(r model.Reply, i int, lim ratelimit.Limit) ratelimit.Result {
	l := r.Limits[i]
	res := ratelimit.Result{
		Allowed:    r.Allowed,
		Limit:      lim,
		Granted:    int(r.Granted),
		Remaining:  int(l.Remaining),
		RetryAfter: ceilMillis(l.Retry),
		ResetAfter: ceilMillis(l.Reset),
	}
	if r.Allowed {
		res.RetryAfter = 0
	}
	return res
}

// ceilMillis turns µs into a Duration rounded up to the millisecond, so a
// wait is never reported shorter than it is.
func ceilMillis(us int64) time.Duration {
	if us <= 0 {
		return 0
	}
	return time.Duration((us+999)/1000) * time.Millisecond
}
