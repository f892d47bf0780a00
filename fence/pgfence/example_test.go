package pgfence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of database/sql

	"github.com/redis-primitives/go/fence/pgfence"
)

// The default tables, as statements for a migration file.
func ExampleDDL() {
	fmt.Print(pgfence.DDL)
	// Output:
	// CREATE TABLE IF NOT EXISTS "pgfence_rows" (
	// 	id          text   PRIMARY KEY,
	// 	value       text   NOT NULL,
	// 	fence_token bigint NOT NULL DEFAULT 0 CHECK (fence_token >= 0)
	// );
	// CREATE TABLE IF NOT EXISTS "pgfence_marks" (
	// 	resource text   PRIMARY KEY,
	// 	token    bigint NOT NULL CHECK (token > 0)
	// );
}

// Tables under names of your own, schema-qualified and quoted.
func ExampleStore_DDL() {
	store, err := pgfence.New(pgfence.WithRowsTable("app", "fenced_rows"), pgfence.WithMarksTable("app", "fence_marks"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(store.DDL())
	// Output:
	// CREATE TABLE IF NOT EXISTS "app"."fenced_rows" (
	// 	id          text   PRIMARY KEY,
	// 	value       text   NOT NULL,
	// 	fence_token bigint NOT NULL DEFAULT 0 CHECK (fence_token >= 0)
	// );
	// CREATE TABLE IF NOT EXISTS "app"."fence_marks" (
	// 	resource text   PRIMARY KEY,
	// 	token    bigint NOT NULL CHECK (token > 0)
	// );
}

func ExampleNew() {
	store, err := pgfence.New() // default table names
	if err != nil {
		log.Fatal(err)
	}
	_ = store
}

func ExampleWithRowsTable() {
	_, err := pgfence.New(pgfence.WithRowsTable("billing", "Fenced Rows"))
	fmt.Println(err)
	_, err = pgfence.New(pgfence.WithRowsTable(""))
	fmt.Println(errors.Is(err, pgfence.ErrInvalidOption))
	// Output:
	// <nil>
	// true
}

func ExampleWithMarksTable() {
	_, err := pgfence.New(pgfence.WithMarksTable("billing", "fence_marks"))
	fmt.Println(err)
	// Output: <nil>
}

func ExampleStore_CreateTables() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@db.internal/app")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, _ := pgfence.New()
	if err := store.CreateTables(ctx, pool); err != nil {
		log.Fatal(err)
	}
}

// A lock holder writes a row with its lease's token.
func ExampleStore_Update() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@db.internal/app")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, _ := pgfence.New()
	var token int64 = 42 // lease.Token from package lock

	err = store.Update(ctx, pool, "account:7", "balance=100", token)
	var stale *pgfence.StaleError
	switch {
	case errors.As(err, &stale):
		log.Printf("fenced out: token %d, a holder with %d has written; stopping", stale.Token, stale.Highest)
	case errors.Is(err, pgfence.ErrNotFound):
		log.Print("no such row")
	case err != nil:
		log.Fatal(err)
	}
}

func ExampleStore_Insert() {
	ctx := context.Background()
	pool, _ := pgxpool.New(ctx, "postgres://app@db.internal/app")
	defer pool.Close()
	store, _ := pgfence.New()
	if err := store.Insert(ctx, pool, "account:7", "balance=0", 42); errors.Is(err, pgfence.ErrExists) {
		log.Print("already there")
	}
}

func ExampleStore_Get() {
	ctx := context.Background()
	pool, _ := pgxpool.New(ctx, "postgres://app@db.internal/app")
	defer pool.Close()
	store, _ := pgfence.New()
	value, token, err := store.Get(ctx, pool, "account:7")
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("%s, last written under token %d", value, token)
}

// A guarded transaction: every statement after the guard is fenced with
// it. A serialization failure is retried whole; a refusal stops.
func ExampleStore_Guard() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@db.internal/app")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, _ := pgfence.New()
	var token int64 = 42 // lease.Token from package lock

	for {
		err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
			if err := store.Guard(ctx, tx, "billing-run", token); err != nil {
				return err // refused: Guard has rolled tx back
			}
			if _, err := tx.Exec(ctx, `UPDATE invoices SET state = 'sent' WHERE run = 7`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO audit (what) VALUES ('run 7 sent')`)
			return err
		})
		if !pgfence.IsSerializationFailure(err) {
			break
		}
		// Not a verdict: the transaction overlapped another. Run it again.
	}
	if errors.Is(err, pgfence.ErrStale) {
		log.Print("a newer holder has taken over; stopping")
	} else if err != nil {
		log.Fatal(err)
	}
}

func ExampleStore_Highest() {
	ctx := context.Background()
	pool, _ := pgxpool.New(ctx, "postgres://app@db.internal/app")
	defer pool.Close()
	store, _ := pgfence.New()
	n, err := store.Highest(ctx, pool, "billing-run")
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("highest token accepted: %d", n)
}

func ExampleIsSerializationFailure() {
	err := fmt.Errorf("commit: %w", pgfence.ErrSerialization)
	fmt.Println(pgfence.IsSerializationFailure(err))
	fmt.Println(pgfence.IsSerializationFailure(pgfence.ErrStale))
	// Output:
	// true
	// false
}

func ExampleStaleError() {
	var err error = &pgfence.StaleError{ID: "billing-run", Token: 3, Highest: 5}
	fmt.Println(errors.Is(err, pgfence.ErrStale))
	fmt.Println(err)
	// Output:
	// true
	// pgfence: token lower than the highest accepted: "billing-run": token 3, highest accepted 5
}

// A guarded transaction through database/sql, on a database opened with
// pgx's stdlib driver (which is part of pgx).
func ExampleStore_GuardSQL() {
	ctx := context.Background()
	db, err := sql.Open("pgx", "postgres://app@db.internal/app") // import _ "github.com/jackc/pgx/v5/stdlib"
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, _ := pgfence.New()
	var token int64 = 42 // lease.Token from package lock

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback() // a no-op after Commit, or after a refusal
	if err := store.GuardSQL(ctx, tx, "billing-run", token); errors.Is(err, pgfence.ErrStale) {
		log.Print("a newer holder has taken over; stopping")
		return
	} else if err != nil {
		log.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE invoices SET state = 'sent' WHERE run = 7`); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
}

// Your own table, fenced by a token column you add to it:
//
//	ALTER TABLE billing.accounts ADD COLUMN fence_token bigint NOT NULL DEFAULT 0;
func ExampleStore_Table() {
	store, _ := pgfence.New()
	accounts, err := store.Table(pgx.Identifier{"billing", "accounts"}, "account_id", "fence_token")
	if err != nil {
		log.Fatal(err)
	}
	_ = accounts
	_, err = store.Table(pgx.Identifier{"accounts"}, "fence_token", "fence_token")
	fmt.Println(err)
	// Output: pgfence: invalid table: id and token columns are both "fence_token"
}

// A fenced write of two columns of your own row.
func ExampleTable_Update() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://app@db.internal/app")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store, _ := pgfence.New()
	accounts, _ := store.Table(pgx.Identifier{"billing", "accounts"}, "account_id", "fence_token")
	var token int64 = 42 // lease.Token from package lock

	err = accounts.Update(ctx, pool, 7, token, map[string]any{"balance": 120, "state": "charged"})
	var stale *pgfence.StaleError
	switch {
	case errors.As(err, &stale):
		log.Printf("refused: token %d, the row is at %d", stale.Token, stale.Highest)
	case errors.Is(err, pgfence.ErrNotFound):
		log.Print("no account 7")
	case err != nil:
		log.Fatal(err)
	}
}

// The same through database/sql.
func ExampleTable_UpdateSQL() {
	ctx := context.Background()
	db, err := sql.Open("pgx", "postgres://app@db.internal/app") // import _ "github.com/jackc/pgx/v5/stdlib"
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, _ := pgfence.New()
	accounts, _ := store.Table(pgx.Identifier{"billing", "accounts"}, "account_id", "fence_token")
	if err := accounts.UpdateSQL(ctx, db, 7, 42, map[string]any{"balance": 120}); errors.Is(err, pgfence.ErrStale) {
		log.Print("a newer holder has written this account; stopping")
	}
}

// Count refused stale writes and guards: the event that shows fencing at
// work.
func ExampleWithHook() {
	var refused atomic.Int64
	store, err := pgfence.New(pgfence.WithHook(func(_ context.Context, e pgfence.Event) {
		if e.Outcome == "stale" {
			refused.Add(1)
		}
	}))
	if err != nil {
		log.Fatal(err)
	}
	_ = store
}

// Log each refused stale write (and nothing else) at level Warn.
func ExampleWithLogger() {
	store, err := pgfence.New(pgfence.WithLogger(slog.Default()))
	if err != nil {
		log.Fatal(err)
	}
	_ = store
}

// An Event reports every fenced write: its verdict, its latency and its
// error.
func ExampleEvent() {
	store, err := pgfence.New(pgfence.WithHook(func(_ context.Context, e pgfence.Event) {
		if e.Outcome == "error" {
			log.Printf("pgfence: %s %s %s: %v after %v", e.Op, e.Table, e.ID, e.Err, e.Latency)
		}
	}))
	if err != nil {
		log.Fatal(err)
	}
	_ = store
}
