package robustness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/fence/pgfence"
	"github.com/redis-primitives/go/internal/redistest/naivelock"
	"github.com/redis-primitives/go/lock"
)

// lockWorkers is how many clients contend for each lock name.
const lockWorkers = 3

// The tokens histories of the two token schemes (tokens.go).
const (
	tokensModel        = "lock tokens"
	counterTokensModel = "lock tokens, WithCounterTokens"
)

// lockClients is what a lock holder calls: its Locker, the naive lock that
// replaces it under LockWithoutFencing, the fenced stores, and the model of
// its tokens' history.
type lockClients struct {
	locker *lock.Locker
	naive  *naivelock.Lock
	store  *fence.Store
	pg     *pgfence.Store // nil: no pgfence writes
	tokens string
}

// startLocks runs lock holders that write through fence: each takes a
// lock, writes its value with the lease's token a few times (pausing past
// its lease now and then), reads, and releases. The lock's operations go
// to the holders model ("lock"), its grants' tokens to the tokens model,
// the writes and reads to the register model ("fence"). With CounterTokens,
// as many names again are held by Lockers WithCounterTokens.
func (r *Run) startLocks(ctx context.Context, wg *sync.WaitGroup) error {
	locker, err := lock.New(r.W.Client)
	if err != nil {
		return err
	}
	counter, err := lock.New(r.W.Client, lock.WithCounterTokens())
	if err != nil {
		return err
	}
	store, err := fence.New(r.W.Client)
	if err != nil {
		return err
	}
	hybrid := lockClients{locker: locker, naive: naivelock.New(r.W.Redis, "naivelock:"), store: store, tokens: tokensModel}
	if r.W.PG != nil && r.wants("pgfence") {
		if hybrid.pg, err = r.pgRows(ctx); err != nil {
			return err
		}
	}
	counted := lockClients{locker: counter, naive: hybrid.naive, store: store, tokens: counterTokensModel}
	for n := range r.W.Names {
		for w := range lockWorkers {
			worker := n*lockWorkers + w
			wg.Go(func() { r.lockWorker(ctx, hybrid, r.Name("account", n), worker) })
			if r.W.CounterTokens {
				wg.Go(func() { r.lockWorker(ctx, counted, r.Name("counter", n), worker) })
			}
		}
	}
	return nil
}

// pgRows creates pgfence's tables and a row per lock name, at token 1 (the
// lowest pgfence takes; every token of a run is above it).
func (r *Run) pgRows(ctx context.Context) (*pgfence.Store, error) {
	pg, err := pgfence.New()
	if err != nil {
		return nil, err
	}
	if err := pg.CreateTables(ctx, r.W.PG); err != nil {
		return nil, err
	}
	for n := range r.W.Names {
		if err := pg.Insert(ctx, r.W.PG, r.pgRow(r.Name("account", n)), "", 1); err != nil {
			return nil, err
		}
	}
	return pg, nil
}

// pgRow is the PostgreSQL row of a lock name.
func (r *Run) pgRow(name string) string { return name }

func (r *Run) lockWorker(ctx context.Context, lc lockClients, name string, worker int) {
	lockPart, fencePart, pgPart := r.part("lock", name), r.part("fence", name), r.part("pgfence", name)
	key := "res:{" + name + "}"
	client := r.H.Client()
	var naiveToken int64
	for seq := 0; ctx.Err() == nil; seq++ {
		opID := id("l", worker, seq)
		var lease *lock.Lease
		var token int64
		var deadline time.Time
		c := now()
		cctx, cancel := withTimeout(ctx)
		if r.W.Mutation == LockWithoutFencing {
			ok, err := lc.naive.Acquire(cctx, name, leaseTTL)
			cancel()
			out, ret := outcomeOf(err == nil && ok, err == nil), retOf(err == nil)
			r.call("lock", lockPart, &client, Acquire{ID: opID, TTL: leaseTTL, Call: c, Return: ret}, c, ret, out)
			if out != Accepted {
				jitter(ctx)
				continue
			}
			naiveToken++ // no token from the lock: the holder's own count
			token, deadline = naiveToken, time.UnixMicro(c).Add(leaseTTL)
		} else {
			l, err := lc.locker.Acquire(cctx, name, leaseTTL)
			cancel()
			known := err == nil || is(err, lock.ErrHeld)
			ret := retOf(known)
			in := Acquire{ID: opID, TTL: leaseTTL, Call: c, Return: ret}
			r.call("lock", lockPart, &client, in, c, ret, outcomeOf(err == nil, known))
			if err != nil {
				jitter(ctx)
				continue
			}
			in.Token = l.Token
			r.H.Add(lc.tokens, r.part(lc.tokens, name), client, in, c, ret, Accepted)
			lease, token, deadline = l, l.Token, l.Deadline(0)
		}
		writes := 1 + rand.IntN(3)
		for i := range writes {
			r.pause(ctx, leaseTTL)
			if ctx.Err() != nil {
				break
			}
			value := fmt.Sprintf("%s#%d", opID, i)
			in := Write{Token: token, Value: value, Late: time.Now().After(deadline)}
			c := now()
			cctx, cancel := withTimeout(ctx)
			var err error
			if r.W.Mutation == FenceAcceptsAnyToken || r.W.Mutation == LockWithoutFencing {
				err = r.W.Redis.Set(cctx, key, value, 0).Err()
			} else {
				err = lc.store.Set(cctx, token, key, value)
			}
			cancel()
			known := err == nil || is(err, fence.ErrStale)
			r.call("fence", fencePart, &client, in, c, retOf(known), outcomeOf(err == nil, known))
			if lc.pg != nil {
				r.pgWrite(ctx, lc.pg, pgPart, &client, r.pgRow(name), in)
			}
		}
		if lc.pg != nil {
			r.pgRead(ctx, lc.pg, pgPart, &client, r.pgRow(name))
		}
		r.read(ctx, lc.store, "fence", fencePart, &client, key)

		c = now()
		cctx, cancel = withTimeout(ctx)
		if lease == nil {
			err := lc.naive.Release(cctx, name)
			cancel()
			ret := retOf(err == nil)
			r.call("lock", lockPart, &client, Release{ID: opID, Call: c, Return: ret}, c, ret, outcomeOf(err == nil, err == nil))
		} else {
			ok, err := lc.locker.Release(cctx, lease)
			cancel()
			ret := retOf(err == nil)
			r.call("lock", lockPart, &client, Release{ID: opID, Call: c, Return: ret}, c, ret, outcomeOf(ok, err == nil))
		}
		jitter(ctx)
	}
}

// outcomeOf is Accepted or Refused when the outcome is known, else Unknown.
func outcomeOf(ok, known bool) Outcome {
	switch {
	case !known:
		return Unknown
	case ok:
		return Accepted
	}
	return Refused
}

// retOf is a call's Return, taken as it returns: now, or pending when its
// outcome is unknown. The holders model reads it from the input as well.
func retOf(known bool) int64 {
	if known {
		return now()
	}
	return pending
}

// read records a plain read of a fenced key: its value, "" when missing.
func (r *Run) read(ctx context.Context, store *fence.Store, model, part string, client *int, key string) {
	c := now()
	cctx, cancel := withTimeout(ctx)
	v, err := store.Get(cctx, key)
	cancel()
	if is(err, fence.ErrNotFound) {
		v, err = "", nil
	}
	r.call(model, part, client, Read{}, c, retOf(err == nil), ReadResult{Value: v, Outcome: outcomeOf(err == nil, err == nil)})
}

// pgWrite records a fenced UPDATE of row through pgfence (or, mutated, a
// plain UPDATE that compares no token).
func (r *Run) pgWrite(ctx context.Context, pg *pgfence.Store, part string, client *int, row string, in Write) {
	c := now()
	cctx, cancel := withTimeout(ctx)
	var err error
	if r.W.Mutation == FenceAcceptsAnyToken {
		// pgfence_rows: the table of a Store made with no WithRowsTable.
		_, err = r.W.PG.Exec(cctx, "UPDATE pgfence_rows SET value = $1 WHERE id = $2", in.Value, row)
	} else {
		err = pg.Update(cctx, r.W.PG, row, in.Value, in.Token)
	}
	cancel()
	known := err == nil || is(err, pgfence.ErrStale)
	r.call("pgfence", part, client, in, c, retOf(known), outcomeOf(err == nil, known))
}

// pgRead records a read of row.
func (r *Run) pgRead(ctx context.Context, pg *pgfence.Store, part string, client *int, row string) {
	c := now()
	cctx, cancel := withTimeout(ctx)
	v, _, err := pg.Get(cctx, r.W.PG, row)
	cancel()
	r.call("pgfence", part, client, Read{}, c, retOf(err == nil), ReadResult{Value: v, Outcome: outcomeOf(err == nil, err == nil)})
}
