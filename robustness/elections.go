package robustness

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/fence"
)

// electionNodes is how many nodes contend in each election.
const electionNodes = 3

// startElections runs elections whose leaders write through their term's
// Fencer every few milliseconds, pausing past their lease now and then and
// writing on waking, as a leader stopped by SIGSTOP does. A reader reads the
// key throughout. Writes and reads go to the register model ("election"),
// with the epoch as the token; terms go to the epoch check.
func (r *Run) startElections(ctx context.Context, wg *sync.WaitGroup) error {
	store, err := fence.New(r.W.Client)
	if err != nil {
		return err
	}
	for n := range r.W.Names {
		name := r.Name("scheduler", n)
		key := "schedule:{" + name + "}"
		for node := range electionNodes {
			nc := Node{Client: r.W.Client}
			if i := n*electionNodes + node; i < len(r.W.Nodes) {
				nc = r.W.Nodes[i]
			}
			e, err := election.New(nc.Client, election.Config{Name: name, NodeID: fmt.Sprintf("node-%d", node), TTL: electionTTL})
			if err != nil {
				return err
			}
			wg.Go(func() { r.electionNode(ctx, e, nc, name, key) })
		}
		wg.Go(func() { r.electionReader(ctx, store, name, key) })
	}
	return nil
}

func (r *Run) electionNode(ctx context.Context, e *election.Elector, nc Node, name, key string) {
	part := r.part("election", name)
	client := r.H.Client()
	_ = e.Run(ctx, func(tctx context.Context, term election.Term) error {
		t := Term{Node: e.NodeID(), Epoch: term.Epoch, Start: now(), End: pending}
		defer func() {
			t.End = now()
			r.mu.Lock()
			r.terms[name] = append(r.terms[name], t)
			r.mu.Unlock()
		}()
		for i := 0; ; i++ {
			r.pauseNode(ctx, electionTTL, nc)
			if ctx.Err() != nil {
				return nil
			}
			value := fmt.Sprintf("%s@%d#%d", e.NodeID(), term.Epoch, i)
			// The write ignores the end of the term on purpose: a leader
			// that woke from a pause writes before it learns it was
			// replaced, and the epoch alone must refuse it.
			in := Write{Token: term.Epoch, Value: value, Late: tctx.Err() != nil}
			c := now()
			cctx, cancel := withTimeout(ctx)
			var err error
			if r.W.Mutation == ElectionWithoutFencing {
				err = r.W.Redis.Set(cctx, key, value, 0).Err()
			} else {
				err = term.Fencer.Set(cctx, key, value)
			}
			cancel()
			known := err == nil || is(err, fence.ErrStale)
			r.call("election", part, &client, in, c, retOf(known), outcomeOf(err == nil, known))
			if !known {
				// A leader that cannot tell whether its write landed waits
				// until it no longer can (history.go's unknownBound) before
				// it writes again. Writing every 10 ms through a failover
				// whose calls fail at once left hundreds of writes pending
				// together, and the register's search grows with them.
				sleep(ctx, callTimeout+unknownSlack)
			}
			if is(err, fence.ErrStale) || tctx.Err() != nil {
				return nil
			}
			sleep(tctx, 10*time.Millisecond)
		}
	})
}

func (r *Run) electionReader(ctx context.Context, store *fence.Store, name, key string) {
	part := r.part("election", name)
	client := r.H.Client()
	for ctx.Err() == nil {
		r.read(ctx, store, "election", part, &client, key)
		sleep(ctx, 10*time.Millisecond)
	}
}

// Terms returns the recorded terms of each election.
func (r *Run) Terms() map[string][]Term {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]Term{}
	for k, v := range r.terms {
		out[k] = append([]Term(nil), v...)
	}
	return out
}
