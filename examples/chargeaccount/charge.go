package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/examples/internal/servers"
	"github.com/redis-primitives/go/fence/pgfence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/lock"
)

type config struct {
	redisAddr, dsn string
	prefix         string        // Redis key prefix; default "chargeaccount:"
	lease          time.Duration // the lock's lease
	slow           time.Duration // worker 1's payment provider; longer than lease
	unfenced       bool          // commit without pgfence.Guard
}

// outcome is what the run left in the database, for the test.
type outcome struct {
	charges   []charge
	balance   int64 // cents, after
	opening   int64 // cents, before
	worker1   error // what worker 1's commit returned
	worker2   error
	tokens    map[string]int64 // each worker's fencing token
	committed map[string]bool  // whether each worker's transaction committed
}

type charge struct {
	worker string
	token  int64
	amount int64
}

const schema = `
CREATE TABLE IF NOT EXISTS chargeaccount_accounts (
	id            text   PRIMARY KEY,
	balance_cents bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS chargeaccount_charges (
	id           bigserial   PRIMARY KEY,
	invoice      text        NOT NULL,
	account      text        NOT NULL REFERENCES chargeaccount_accounts (id),
	amount_cents bigint      NOT NULL,
	worker       text        NOT NULL,
	fence_token  bigint      NOT NULL,
	charged_at   timestamptz NOT NULL DEFAULT now()
);`

// run plays the two workers and reports to w.
func run(ctx context.Context, cfg config, w io.Writer) (outcome, error) {
	out := outcome{tokens: map[string]int64{}, committed: map[string]bool{}}
	if cfg.prefix == "" {
		cfg.prefix = "chargeaccount:"
	}
	pool, err := pgxpool.New(ctx, cfg.dsn)
	if err != nil {
		return out, err
	}
	defer pool.Close()
	store, err := pgfence.New()
	if err != nil {
		return out, err
	}
	if err := store.CreateTables(ctx, pool); err != nil {
		return out, err
	}
	if _, err := pool.Exec(ctx, schema); err != nil {
		return out, fmt.Errorf("create tables: %w", err)
	}
	rc := redis.NewClient(&redis.Options{Addr: cfg.redisAddr, ContextTimeoutEnabled: true})
	defer rc.Close()
	locker, err := lock.New(goredisadapter.New(rc), lock.WithPrefix(cfg.prefix+"lock:"))
	if err != nil {
		return out, err
	}

	// A fresh account and invoice each run, so a shared database can be
	// reused.
	id := servers.RandomHex(3)
	j := job{
		account: "acct-" + id, invoice: "inv-" + id, amount: 3000,
		pool: pool, store: store, locker: locker, cfg: cfg,
		start: time.Now(), w: w,
	}
	out.opening = 10000
	if _, err := pool.Exec(ctx, `INSERT INTO chargeaccount_accounts (id, balance_cents) VALUES ($1, $2)`, j.account, out.opening); err != nil {
		return out, err
	}
	mode := "fenced: every charge commits under pgfence.Guard"
	if cfg.unfenced {
		mode = "UNFENCED: the charge commits without pgfence.Guard"
	}
	j.say("main", "invoice %s: charge %s to account %s (balance %s); lease %v; %s",
		j.invoice, money(j.amount), j.account, money(out.opening), cfg.lease, mode)

	var wg sync.WaitGroup
	first := make(chan struct{}) // worker 1 holds the lock
	var r1, r2 result
	wg.Go(func() { r1 = j.work(ctx, "worker-1", cfg.slow, first) })
	wg.Go(func() {
		select { // the queue redelivers the job once worker 1 has it
		case <-first:
		case <-ctx.Done():
			r2.err = ctx.Err()
			return
		}
		r2 = j.work(ctx, "worker-2", cfg.lease/6, nil)
	})
	wg.Wait()
	out.worker1, out.worker2 = r1.err, r2.err
	out.tokens["worker-1"], out.tokens["worker-2"] = r1.token, r2.token
	out.committed["worker-1"], out.committed["worker-2"] = r1.committed, r2.committed
	if ctx.Err() != nil {
		return out, ctx.Err()
	}

	rows, err := pool.Query(ctx, `SELECT worker, fence_token, amount_cents FROM chargeaccount_charges WHERE invoice = $1 ORDER BY id`, j.invoice)
	if err != nil {
		return out, err
	}
	out.charges, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (charge, error) {
		var c charge
		return c, r.Scan(&c.worker, &c.token, &c.amount)
	})
	if err != nil {
		return out, err
	}
	if err := pool.QueryRow(ctx, `SELECT balance_cents FROM chargeaccount_accounts WHERE id = $1`, j.account).Scan(&out.balance); err != nil {
		return out, err
	}
	for _, c := range out.charges {
		j.say("main", "charge recorded: %s by %s with token %d", money(c.amount), c.worker, c.token)
	}
	verdict := "charged once"
	if len(out.charges) > 1 {
		verdict = fmt.Sprintf("CHARGED %d TIMES", len(out.charges))
	}
	j.say("main", "invoice %s %s; balance %s -> %s", j.invoice, verdict, money(out.opening), money(out.balance))
	if !cfg.unfenced && len(out.charges) != 1 {
		return out, fmt.Errorf("the fence did not hold: invoice %s charged %d times", j.invoice, len(out.charges))
	}
	return out, nil
}

type job struct {
	account, invoice string
	amount           int64
	pool             *pgxpool.Pool
	store            *pgfence.Store
	locker           *lock.Locker
	cfg              config
	start            time.Time

	mu sync.Mutex
	w  io.Writer
}

type result struct {
	token     int64
	committed bool
	err       error
}

func (j *job) say(who, format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	fmt.Fprintf(j.w, "[%5dms] %-8s "+format+"\n", append([]any{time.Since(j.start).Milliseconds(), who}, args...)...)
}

// work is one delivery of the job: lock, read, call the provider, commit
// the charge with the lock's token, release. It does not renew the lease:
// that is the point.
func (j *job) work(ctx context.Context, who string, provider time.Duration, locked chan<- struct{}) result {
	var r result
	name := "invoice:" + j.invoice
	lease, err := j.locker.AcquireWait(ctx, name, j.cfg.lease)
	if err != nil {
		r.err = err
		return r
	}
	r.token = lease.Token
	j.say(who, "took the lock with token %d", lease.Token)
	if locked != nil {
		close(locked)
	}
	var charged bool
	if err := j.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM chargeaccount_charges WHERE invoice = $1)`, j.invoice).Scan(&charged); err != nil {
		r.err = err
		return r
	}
	if charged {
		j.say(who, "invoice already charged; nothing to do")
		_, r.err = j.locker.Release(ctx, lease)
		return r
	}
	j.say(who, "invoice not charged yet; calling the payment provider (%v)", provider)
	select {
	case <-time.After(provider):
	case <-ctx.Done():
		r.err = ctx.Err()
		return r
	}

	r.err = pgx.BeginFunc(ctx, j.pool, func(tx pgx.Tx) error {
		if !j.cfg.unfenced {
			// First in the transaction: refuses, and rolls back, if a
			// newer token has committed for this invoice.
			if err := j.store.Guard(ctx, tx, name, lease.Token); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE chargeaccount_accounts SET balance_cents = balance_cents - $2 WHERE id = $1`, j.account, j.amount); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO chargeaccount_charges (invoice, account, amount_cents, worker, fence_token) VALUES ($1, $2, $3, $4, $5)`,
			j.invoice, j.account, j.amount, who, lease.Token)
		return err
	})
	var stale *pgfence.StaleError
	switch {
	case errors.As(r.err, &stale):
		j.say(who, "commit REFUSED: token %d < %d already accepted; rolled back, nothing charged", stale.Token, stale.Highest)
	case r.err != nil:
		j.say(who, "commit failed: %v", r.err)
	default:
		r.committed = true
		j.say(who, "charged %s, committed with token %d", money(j.amount), lease.Token)
	}

	released, err := j.locker.Release(ctx, lease)
	switch {
	case err != nil:
		r.err = errors.Join(r.err, err)
	case released:
		j.say(who, "released the lock")
	default:
		j.say(who, "release deleted nothing: the lease had expired and the lock is someone else's")
	}
	return r
}

func money(cents int64) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }
