package robustness

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redis-primitives/go/internal/redistest/naivesemaphore"
	"github.com/redis-primitives/go/semaphore"
)

// semWorkers is how many clients contend for each semaphore.
const semWorkers = 4

// crash is the probability that a holder drops its permit without
// releasing it, as a process that died would.
const crash = 0.05

// startSemaphores runs permit holders: each takes a permit, holds it for a
// moment (or pauses past it, or crashes and never releases it) and releases
// it. Every operation goes to the holders model ("semaphore").
func (r *Run) startSemaphores(ctx context.Context, wg *sync.WaitGroup) error {
	issuer, err := semaphore.New(r.W.Client)
	if err != nil {
		return err
	}
	naive := naivesemaphore.New(r.W.Redis, "naivesemaphore:")
	for n := range r.W.Names {
		name := r.Name("exports", n)
		for w := range semWorkers {
			wg.Go(func() { r.semWorker(ctx, issuer, naive, name, n*semWorkers+w) })
		}
	}
	return nil
}

func (r *Run) semWorker(ctx context.Context, issuer *semaphore.Issuer, naive *naivesemaphore.Semaphore, name string, worker int) {
	part := r.part("semaphore", name)
	client := r.H.Client()
	for seq := 0; ctx.Err() == nil; seq++ {
		opID := id("s", worker, seq)
		var permit *semaphore.Permit
		c := now()
		cctx, cancel := withTimeout(ctx)
		var out Outcome
		var ret, granted int64
		if r.W.Mutation == SemaphoreWithoutLeases {
			ok, err := naive.Acquire(cctx, name, semCapacity)
			out, ret = outcomeOf(ok && err == nil, err == nil), retOf(err == nil)
		} else {
			p, err := issuer.Acquire(cctx, name, semCapacity, leaseTTL)
			known := err == nil || is(err, semaphore.ErrFull)
			out, ret = outcomeOf(err == nil, known), retOf(known)
			if err == nil {
				permit, granted = p, p.Granted.UnixMicro()
			}
		}
		cancel()
		r.call("semaphore", part, &client, Acquire{ID: opID, TTL: leaseTTL, Granted: granted, Call: c, Return: ret}, c, ret, out)
		if out != Accepted {
			jitter(ctx)
			continue
		}
		if rand.Float64() < crash {
			r.W.Faults.Add("client crashed holding a permit")
			continue
		}
		if !r.pause(ctx, leaseTTL) {
			sleep(ctx, time.Duration(rand.Int64N(int64(leaseTTL/5))))
		}
		c = now()
		cctx, cancel = withTimeout(ctx)
		if permit == nil {
			err := naive.Release(cctx, name)
			out, ret = outcomeOf(err == nil, err == nil), retOf(err == nil)
		} else {
			ok, err := issuer.Release(cctx, permit)
			out, ret = outcomeOf(ok, err == nil), retOf(err == nil)
		}
		cancel()
		r.call("semaphore", part, &client, Release{ID: opID, Call: c, Return: ret}, c, ret, out)
		jitter(ctx)
	}
}
