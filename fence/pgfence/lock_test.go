package pgfence_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/redis-primitives/go/fence/pgfence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// The scenario the project is built around, with the seed's figures: A's
// lease is 200ms and its work takes 350ms; B acquires at about 220ms and
// writes; then A, still believing it holds the lock, writes.
const (
	leaseTTL = 200 * time.Millisecond
	bStarts  = 220 * time.Millisecond
	aWork    = 350 * time.Millisecond
)

type expiry struct {
	aToken, bToken int64
	aErr           error
}

// expiredLease plays the scenario with the real lock on a real Redis;
// write is the database write, fenced or not, called by B and then by A.
func expiredLease(t *testing.T, write func(ctx context.Context, who string, token int64) error) expiry {
	t.Helper()
	s := redistest.Start(t)
	locker, err := lock.New(goredisadapter.New(s.Client(t)), lock.WithPrefix(s.Prefix()+"lock:"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t0 := time.Now()
	a, err := locker.Acquire(ctx, "acct", leaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	var (
		b           *lock.Lease
		bErr        error
		bAcquiredAt time.Duration
		bWrote      = make(chan struct{})
	)
	go func() {
		defer close(bWrote)
		time.Sleep(time.Until(t0.Add(bStarts)))
		deadline := time.Now().Add(2 * time.Second)
		for {
			lease, err := locker.Acquire(ctx, "acct", 10*time.Second)
			if err == nil {
				b, bAcquiredAt = lease, time.Since(t0)
				bErr = write(ctx, "B", lease.Token)
				return
			}
			if !errors.Is(err, lock.ErrHeld) || time.Now().After(deadline) {
				bErr = err
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	time.Sleep(time.Until(t0.Add(aWork))) // A's work: the scenario, not a wait
	<-bWrote                              // on a slow machine, make sure B wrote first
	if bErr != nil {
		t.Fatalf("B: %v", bErr)
	}
	aWroteAt := time.Since(t0)
	aErr := write(ctx, "A", a.Token)
	t.Logf("A token %d (lease %v), B token %d acquired at %v, A wrote at %v",
		a.Token, leaseTTL, b.Token, bAcquiredAt.Round(time.Millisecond), aWroteAt.Round(time.Millisecond))
	if bAcquiredAt < leaseTTL || b.Token <= a.Token {
		t.Fatalf("B acquired at %v with token %d; want after A's %v lease, above A's %d", bAcquiredAt, b.Token, leaseTTL, a.Token)
	}
	return expiry{aToken: a.Token, bToken: b.Token, aErr: aErr}
}

func TestStaleHoldersRowUpdateIsRefusedAndNextHoldersValueSurvives(t *testing.T) {
	pool, store := newDB(t, 0)
	if err := store.Insert(context.Background(), pool, "acct", "initial", 0+1); err != nil {
		t.Fatal(err)
	}
	r := expiredLease(t, func(ctx context.Context, who string, token int64) error {
		return store.Update(ctx, pool, "acct", who, token)
	})
	wantStale(t, r.aErr, r.aToken, r.bToken)
	if v, tok := mustGet(t, store, pool, "acct"); v != "B" || tok != r.bToken {
		t.Fatalf("row = %q/%d, want B's value and token %d", v, tok, r.bToken)
	}
}

func TestWithoutFencingStaleHoldersPlainUpdateClobbersNextHoldersRow(t *testing.T) {
	pool, store := newDB(t, 0)
	if err := store.Insert(context.Background(), pool, "acct", "initial", 1); err != nil {
		t.Fatal(err)
	}
	r := expiredLease(t, func(ctx context.Context, who string, _ int64) error {
		_, err := pool.Exec(ctx, `UPDATE pgfence_rows SET value = $1 WHERE id = 'acct'`, who)
		return err
	})
	if r.aErr != nil {
		t.Fatal(r.aErr)
	}
	if v, _ := mustGet(t, store, pool, "acct"); v != "A" {
		t.Fatalf("row = %q; a plain UPDATE was expected to let the stale holder A overwrite B", v)
	}
}

// transfer is a transaction of several statements: the balance, a ledger
// entry and an audit entry. guard decides whether it is fenced.
func transfer(pool *pgxpool.Pool, store *pgfence.Store, guard bool) func(ctx context.Context, who string, token int64) error {
	return func(ctx context.Context, who string, token int64) error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if guard {
				if err := store.Guard(ctx, tx, "acct", token); err != nil {
					return err
				}
			}
			stmts := []string{
				`UPDATE account SET balance = balance + 10, last = $1`,
				`INSERT INTO ledger (who, amount) VALUES ($1, 10)`,
				`INSERT INTO audit (who, what) VALUES ($1, 'transfer')`,
			}
			for _, q := range stmts {
				if _, err := tx.Exec(ctx, q, who); err != nil {
					return fmt.Errorf("%s: %w", q, err)
				}
			}
			return nil
		})
	}
}

func setupLedger(t *testing.T) (*pgxpool.Pool, *pgfence.Store) {
	t.Helper()
	pool, store := newDB(t, 0)
	_, err := pool.Exec(context.Background(), `
CREATE TABLE account (balance int NOT NULL, last text NOT NULL);
INSERT INTO account VALUES (100, 'nobody');
CREATE TABLE ledger (who text NOT NULL, amount int NOT NULL);
CREATE TABLE audit (who text NOT NULL, what text NOT NULL);`)
	if err != nil {
		t.Fatal(err)
	}
	return pool, store
}

// traces returns, for who, the balance's last writer and the count of its
// ledger and audit entries.
func traces(t *testing.T, pool *pgxpool.Pool, who string) (last string, ledger, audit int) {
	t.Helper()
	err := pool.QueryRow(context.Background(), `SELECT (SELECT last FROM account),
	(SELECT count(*) FROM ledger WHERE who = $1), (SELECT count(*) FROM audit WHERE who = $1)`, who).Scan(&last, &ledger, &audit)
	if err != nil {
		t.Fatal(err)
	}
	return last, ledger, audit
}

func TestStaleHoldersGuardedTransactionIsRefusedAndLeavesNoTrace(t *testing.T) {
	pool, store := setupLedger(t)
	r := expiredLease(t, transfer(pool, store, true))
	wantStale(t, r.aErr, r.aToken, r.bToken)
	last, ledger, audit := traces(t, pool, "A")
	if last != "B" || ledger != 0 || audit != 0 {
		t.Fatalf("after A's refused transaction: balance last written by %q, %d ledger and %d audit entries of A; want B, 0, 0", last, ledger, audit)
	}
	if _, l, a := traces(t, pool, "B"); l != 1 || a != 1 {
		t.Fatalf("B's transaction: %d ledger, %d audit entries, want 1 and 1", l, a)
	}
}

func TestWithoutGuardStaleHoldersTransactionLandsOverNextHolders(t *testing.T) {
	pool, store := setupLedger(t)
	r := expiredLease(t, transfer(pool, store, false))
	if r.aErr != nil {
		t.Fatal(r.aErr)
	}
	last, ledger, audit := traces(t, pool, "A")
	if last != "A" || ledger != 1 || audit != 1 {
		t.Fatalf("unguarded: last %q, %d ledger, %d audit entries of A; expected A's transaction to land over B's", last, ledger, audit)
	}
}

// The documented limit of counter-only tokens (lock.WithCounterTokens),
// through the guard: lose the lock's counter and the next holder is issued
// the stale holder's token, so the stale holder's transaction is accepted
// after the new holder's.
func TestLostLockCounterReissuesTokenAndStaleTransactionIsAccepted(t *testing.T) {
	pool, store := setupLedger(t)
	ctx := context.Background()
	a, b := loseCounterBetweenTwoHolders(t, lock.WithCounterTokens())
	t.Logf("A token %d, B token %d after the counter was lost", a.Token, b.Token)
	if b.Token != a.Token {
		t.Fatalf("B got %d, A had %d: expected the token to be reissued", b.Token, a.Token)
	}
	if err := transfer(pool, store, true)(ctx, "B", b.Token); err != nil {
		t.Fatal(err)
	}
	if err := transfer(pool, store, true)(ctx, "A", a.Token); err != nil {
		t.Fatalf("stale A with a reissued token: %v; expected accepted (the limit this test documents)", err)
	}
	if last, l, _ := traces(t, pool, "A"); last != "A" || l != 1 {
		t.Fatalf("last %q, %d ledger entries of A; want A's transaction landed", last, l)
	}
}

// With the default tokens the same loss issues B a token above A's, and the
// guard refuses A's transaction.
func TestLostLockCounterWithDefaultTokensStillRefusesTheStaleTransaction(t *testing.T) {
	pool, store := setupLedger(t)
	ctx := context.Background()
	a, b := loseCounterBetweenTwoHolders(t)
	t.Logf("A token %d, B token %d after the counter was lost", a.Token, b.Token)
	if b.Token <= a.Token {
		t.Fatalf("B got %d, A had %d: the lost counter reissued a token", b.Token, a.Token)
	}
	if err := transfer(pool, store, true)(ctx, "B", b.Token); err != nil {
		t.Fatal(err)
	}
	wantStale(t, transfer(pool, store, true)(ctx, "A", a.Token), a.Token, b.Token)
	if _, l, _ := traces(t, pool, "A"); l != 0 {
		t.Fatalf("%d ledger entries of A; want none: the stale transaction landed", l)
	}
}

// loseCounterBetweenTwoHolders lets A take the lock, deletes its fencing
// counter, and returns A's lease and that of B, who acquires once A's lease
// has expired.
func loseCounterBetweenTwoHolders(t *testing.T, opts ...lock.Option) (a, b *lock.Lease) {
	t.Helper()
	s := redistest.Start(t)
	c := s.Client(t)
	locker, err := lock.New(goredisadapter.New(c), append([]lock.Option{lock.WithPrefix(s.Prefix() + "lock:")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if a, err = locker.Acquire(ctx, "acct", 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Del(ctx, s.Prefix()+"lock:{acct}:token").Result(); err != nil || n != 1 {
		t.Fatalf("delete the counter: %d, %v", n, err)
	}
	for {
		if b, err = locker.Acquire(ctx, "acct", time.Second); err == nil {
			return a, b
		}
		if !errors.Is(err, lock.ErrHeld) {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
