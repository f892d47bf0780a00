package robustness

import (
	"context"
	"sync"

	"github.com/redis-primitives/go/internal/redistest/naiveratelimit"
	"github.com/redis-primitives/go/ratelimit"
)

// limitWorkers is how many clients share each limited key.
const limitWorkers = 4

// startLimiters runs callers of a sliding-log limit of limitN per
// limitWindow on shared keys; each decision goes to the window bound.
func (r *Run) startLimiters(ctx context.Context, wg *sync.WaitGroup) error {
	limiter, err := ratelimit.New(r.W.Client)
	if err != nil {
		return err
	}
	naive := &naiveratelimit.SlidingWindow{Client: r.W.Redis, Limit: limitN, Window: limitWindow}
	rule := ratelimit.SlidingLog(limitN, limitWindow)
	for n := range r.W.Names {
		key := r.Name("user", n)
		for range limitWorkers {
			wg.Go(func() {
				for ctx.Err() == nil {
					c := now()
					cctx, cancel := withTimeout(ctx)
					var allowed bool
					var err error
					if r.W.Mutation == LimiterThatDoesNotCount {
						allowed, err = naive.Allow(cctx, key)
					} else {
						var res ratelimit.Result
						res, err = limiter.Allow(cctx, key, rule)
						allowed = res.Allowed
					}
					cancel()
					d := Decision{Call: c, Return: retOf(err == nil), Outcome: outcomeOf(allowed, err == nil)}
					r.mu.Lock()
					r.decisions[key] = append(r.decisions[key], d)
					r.mu.Unlock()
					jitter(ctx)
				}
			})
		}
	}
	return nil
}

// Decisions returns the recorded decisions of each key.
func (r *Run) Decisions() map[string][]Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]Decision{}
	for k, v := range r.decisions {
		out[k] = append([]Decision(nil), v...)
	}
	return out
}
