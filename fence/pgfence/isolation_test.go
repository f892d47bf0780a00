package pgfence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/redis-primitives/go/fence/pgfence"
)

const (
	writers         = 50
	writesPerWriter = 10
)

var levels = []pgx.TxIsoLevel{pgx.ReadCommitted, pgx.RepeatableRead, pgx.Serializable}

// A guarded write: the guard, a plain UPDATE of another table, and the
// history entry, all in the caller's transaction.
func guardedWrite(store *pgfence.Store) writeFunc {
	return func(ctx context.Context, tx pgx.Tx, token int64, w, i int) error {
		if err := store.Guard(ctx, tx, "acct", token); err != nil {
			return err
		}
		return plainWrite(ctx, tx, token, w, i)
	}
}

// The control: the same statements with no guard.
func plainWrite(ctx context.Context, tx pgx.Tx, token int64, w, i int) error {
	if _, err := tx.Exec(ctx, `UPDATE account SET value = $1, token = $2 WHERE id = 'acct'`, fmt.Sprintf("w%d/%d", w, i), token); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO history (writer, n, token) VALUES ($1, $2, $3)`, w, i, token)
	return err
}

// A fenced row update and its history entry in one transaction.
func rowWrite(store *pgfence.Store) writeFunc {
	return func(ctx context.Context, tx pgx.Tx, token int64, w, i int) error {
		if err := store.Update(ctx, tx, "acct", fmt.Sprintf("w%d/%d", w, i), token); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO history (writer, n, token) VALUES ($1, $2, $3)`, w, i, token)
		return err
	}
}

type writeFunc func(ctx context.Context, tx pgx.Tx, token int64, w, i int) error

type result struct {
	accepted    map[[2]int]int64 // (writer, n) → token
	refused     int
	retries     int
	maxTried    int64
	badRefusals []string
}

// runFunc runs one whole transaction at iso: BEGIN, the write, COMMIT.
type runFunc func(ctx context.Context, iso pgx.TxIsoLevel, token int64, w, i int) error

// raceTx runs write in pgx transactions, as race does.
func raceTx(t *testing.T, pool *pgxpool.Pool, iso pgx.TxIsoLevel, write writeFunc) result {
	t.Helper()
	return race(t, iso, func(ctx context.Context, iso pgx.TxIsoLevel, token int64, w, i int) error {
		return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: iso}, func(tx pgx.Tx) error {
			return write(ctx, tx, token, w, i)
		})
	})
}

// sqlWriteFunc is a writeFunc for a database/sql transaction.
type sqlWriteFunc func(ctx context.Context, tx *sql.Tx, token int64, w, i int) error

var sqlLevels = map[pgx.TxIsoLevel]sql.IsolationLevel{
	pgx.ReadCommitted:  sql.LevelReadCommitted,
	pgx.RepeatableRead: sql.LevelRepeatableRead,
	pgx.Serializable:   sql.LevelSerializable,
}

// raceSQL runs write in database/sql transactions on db, as race does.
func raceSQL(t *testing.T, db *sql.DB, iso pgx.TxIsoLevel, write sqlWriteFunc) result {
	t.Helper()
	return race(t, iso, func(ctx context.Context, iso pgx.TxIsoLevel, token int64, w, i int) error {
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sqlLevels[iso]})
		if err != nil {
			return err
		}
		if err := write(ctx, tx, token, w, i); err != nil {
			_ = tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}

// race runs 50 writers, each making writesPerWriter transactions at iso
// with random tokens, retrying a transaction whole on a serialization
// failure.
func race(t *testing.T, iso pgx.TxIsoLevel, run runFunc) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var (
		mu  sync.Mutex
		res = result{accepted: map[[2]int]int64{}}
		wg  sync.WaitGroup
	)
	var done atomic.Int64 // transactions finished, by all writers
	start := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			<-start
			for i := range writesPerWriter {
				// Random, in overlapping windows that drift upward with the
				// race's progress (not one writer's), so that many writes are
				// accepted and many refused whatever the schedule.
				token := done.Load()/writers*100 + rand.Int64N(150) + 1
				var err error
				for {
					err = run(ctx, iso, token, w, i)
					if !pgfence.IsSerializationFailure(err) {
						break
					}
					mu.Lock()
					res.retries++
					mu.Unlock()
				}
				done.Add(1)
				mu.Lock()
				res.maxTried = max(res.maxTried, token)
				var se *pgfence.StaleError
				switch {
				case err == nil:
					res.accepted[[2]int{w, i}] = token
				case errors.As(err, &se):
					res.refused++
					if se.Token != token || se.Highest <= token {
						res.badRefusals = append(res.badRefusals, se.Error())
					}
				default:
					t.Errorf("writer %d, write %d, token %d: %v", w, i, token, err)
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	return res
}

// history returns the committed history in the order it was written. Each
// entry is written after the guard (or the row lock), which is held until
// commit, so this is the order in which writes were accepted.
func history(t *testing.T, pool *pgxpool.Pool) (tokens []int64, who map[[2]int]int64) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT writer, n, token FROM history ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	who = map[[2]int]int64{}
	for rows.Next() {
		var w, n int
		var tok int64
		if err := rows.Scan(&w, &n, &tok); err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, tok)
		who[[2]int{w, n}] = tok
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return tokens, who
}

func regressions(h []int64) int {
	n := 0
	for i := 1; i < len(h); i++ {
		if h[i] < h[i-1] {
			n++
		}
	}
	return n
}

func setupRace(t *testing.T) (*pgxpool.Pool, *pgfence.Store) {
	t.Helper()
	pool, store := newDB(t, writers+2)
	_, err := pool.Exec(context.Background(), `
CREATE TABLE account (id text PRIMARY KEY, value text NOT NULL, token bigint NOT NULL);
INSERT INTO account VALUES ('acct', 'initial', 0);
CREATE TABLE history (seq bigserial PRIMARY KEY, writer int NOT NULL, n int NOT NULL, token bigint NOT NULL);`)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Insert(context.Background(), pool, "acct", "initial", 1); err != nil {
		t.Fatal(err)
	}
	return pool, store
}

func checkRace(t *testing.T, pool *pgxpool.Pool, res result) {
	t.Helper()
	tokens, who := history(t, pool)
	t.Logf("%d transactions: %d accepted, %d refused, %d serialization retries, %d regressions in the history",
		writers*writesPerWriter, len(res.accepted), res.refused, res.retries, regressions(tokens))
	if len(res.accepted) < 10 || res.refused == 0 {
		t.Fatalf("%d accepted, %d refused: the race did not exercise both verdicts", len(res.accepted), res.refused)
	}
	if n := regressions(tokens); n != 0 {
		t.Fatalf("%d times a lower token was accepted after a higher one: %v", n, tokens)
	}
	if len(res.badRefusals) > 0 {
		t.Fatalf("refusals that do not add up: %v", res.badRefusals)
	}
	// Exactly the writes reported accepted are in the history: refused
	// transactions left no trace, and no accepted one was lost.
	if len(who) != len(res.accepted) {
		t.Fatalf("history has %d entries, writers saw %d accepted", len(who), len(res.accepted))
	}
	for k, tok := range res.accepted {
		if who[k] != tok {
			t.Fatalf("accepted write %v (token %d) is missing from the history", k, tok)
		}
	}
}

func TestConcurrentGuardedTransactionsNeverAcceptLowerAfterHigher(t *testing.T) {
	for _, iso := range levels {
		t.Run(string(iso), func(t *testing.T) {
			pool, store := setupRace(t)
			res := raceTx(t, pool, iso, guardedWrite(store))
			checkRace(t, pool, res)
			var tok int64
			if err := pool.QueryRow(context.Background(), `SELECT token FROM account WHERE id = 'acct'`).Scan(&tok); err != nil {
				t.Fatal(err)
			}
			if tok != res.maxTried {
				t.Fatalf("final value belongs to token %d, want the highest tried, %d", tok, res.maxTried)
			}
			if h, err := store.Highest(context.Background(), pool, "acct"); err != nil || h != res.maxTried {
				t.Fatalf("highest = %d, %v; want %d", h, err, res.maxTried)
			}
		})
	}
}

func TestConcurrentFencedRowUpdatesNeverAcceptLowerAfterHigher(t *testing.T) {
	for _, iso := range levels {
		t.Run(string(iso), func(t *testing.T) {
			pool, store := setupRace(t)
			res := raceTx(t, pool, iso, rowWrite(store))
			checkRace(t, pool, res)
			if _, tok := mustGet(t, store, pool, "acct"); tok != res.maxTried {
				t.Fatalf("final row belongs to token %d, want the highest tried, %d", tok, res.maxTried)
			}
		})
	}
}

// The control: without the guard, the same history check must see lower
// tokens land after higher ones, or it proves nothing above.
func TestWithoutGuardConcurrentTransactionsAcceptLowerAfterHigher(t *testing.T) {
	pool, _ := setupRace(t)
	res := raceTx(t, pool, pgx.ReadCommitted, plainWrite)
	tokens, _ := history(t, pool)
	n := regressions(tokens)
	t.Logf("unguarded: %d accepted, %d regressions in the history", len(res.accepted), n)
	if n == 0 {
		t.Fatalf("no regression among %d unguarded writes with random tokens: the history check cannot see a broken fence", len(tokens))
	}
}

// Under REPEATABLE READ and SERIALIZABLE, a guard or update that overlaps
// a committed write of the same resource is aborted by PostgreSQL. That is
// a request to retry, not a verdict, and the retry gets the real verdict.
func TestOverlapUnderSnapshotIsolationAsksForRetryNotAVerdict(t *testing.T) {
	for _, iso := range []pgx.TxIsoLevel{pgx.RepeatableRead, pgx.Serializable} {
		t.Run(string(iso), func(t *testing.T) {
			pool, store := newDB(t, 0)
			ctx := context.Background()
			guard := func(token int64) error {
				return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return store.Guard(ctx, tx, "job", token) })
			}
			if err := guard(1); err != nil {
				t.Fatal(err)
			}
			if err := store.Insert(ctx, pool, "acct", "v1", 1); err != nil {
				t.Fatal(err)
			}
			table := accountTable(t, pool, store)
			for _, op := range []struct {
				name string
				run  func(pgx.Tx, int64) error
				bump func() error
			}{
				{"guard", func(tx pgx.Tx, tok int64) error { return store.Guard(ctx, tx, "job", tok) }, func() error { return guard(5) }},
				{"update", func(tx pgx.Tx, tok int64) error { return store.Update(ctx, tx, "acct", "v", tok) },
					func() error { return store.Update(ctx, pool, "acct", "v5", 5) }},
				{"table update", func(tx pgx.Tx, tok int64) error {
					return table.Update(ctx, tx, "acct", tok, map[string]any{"value": "v"})
				},
					func() error { return table.Update(ctx, pool, "acct", 5, map[string]any{"value": "v5"}) }},
			} {
				tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: iso})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec(ctx, `SELECT 1`); err != nil { // takes the snapshot
					t.Fatal(err)
				}
				if err := op.bump(); err != nil { // another holder commits token 5
					t.Fatal(err)
				}
				err = op.run(tx, 6)
				_ = tx.Rollback(ctx)
				var pg *pgconn.PgError
				if !errors.Is(err, pgfence.ErrSerialization) || !pgfence.IsSerializationFailure(err) ||
					errors.Is(err, pgfence.ErrStale) || !errors.As(err, &pg) || pg.Code != "40001" {
					t.Fatalf("%s overlapping a commit: %v; want ErrSerialization wrapping SQLSTATE 40001, not a verdict", op.name, err)
				}
				// The retry, from BEGIN, sees token 5 and accepts 6.
				err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: iso}, func(tx pgx.Tx) error { return op.run(tx, 6) })
				if err != nil {
					t.Fatalf("%s retry: %v", op.name, err)
				}
			}
		})
	}
}

// The SQL of plainWrite, for a database/sql transaction.
func plainWriteSQL(ctx context.Context, tx *sql.Tx, token int64, w, i int) error {
	if _, err := tx.ExecContext(ctx, `UPDATE account SET value = $1, token = $2 WHERE id = 'acct'`, fmt.Sprintf("w%d/%d", w, i), token); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO history (writer, n, token) VALUES ($1, $2, $3)`, w, i, token)
	return err
}

// openSQL returns a database/sql handle on pool, through pgx's stdlib
// driver, closed when t ends.
func openSQL(t *testing.T, pool *pgxpool.Pool) *sql.DB {
	t.Helper()
	db := stdlib.OpenDBFromPool(pool)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func finalToken(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	var tok int64
	if err := pool.QueryRow(context.Background(), `SELECT token FROM account WHERE id = 'acct'`).Scan(&tok); err != nil {
		t.Fatal(err)
	}
	return tok
}

// GuardSQL is Guard through database/sql: the same race, the same checks.
func TestConcurrentGuardedSQLTransactionsNeverAcceptLowerAfterHigher(t *testing.T) {
	for _, iso := range levels {
		t.Run(string(iso), func(t *testing.T) {
			pool, store := setupRace(t)
			db := openSQL(t, pool)
			res := raceSQL(t, db, iso, func(ctx context.Context, tx *sql.Tx, token int64, w, i int) error {
				if err := store.GuardSQL(ctx, tx, "acct", token); err != nil {
					return err
				}
				return plainWriteSQL(ctx, tx, token, w, i)
			})
			checkRace(t, pool, res)
			if tok := finalToken(t, pool); tok != res.maxTried {
				t.Fatalf("final value belongs to token %d, want the highest tried, %d", tok, res.maxTried)
			}
		})
	}
}

// A fenced update of the caller's own table (account, token column
// "token"), through both doors, and its history entry in one transaction.
func TestConcurrentFencedUpdatesOfCallersTableNeverAcceptLowerAfterHigher(t *testing.T) {
	for _, door := range []string{"pgx", "sql"} {
		for _, iso := range levels {
			t.Run(door+"/"+string(iso), func(t *testing.T) {
				pool, store := setupRace(t)
				table, err := store.Table(pgx.Identifier{"account"}, "id", "token")
				if err != nil {
					t.Fatal(err)
				}
				var res result
				if door == "pgx" {
					res = raceTx(t, pool, iso, func(ctx context.Context, tx pgx.Tx, token int64, w, i int) error {
						if err := table.Update(ctx, tx, "acct", token, map[string]any{"value": fmt.Sprintf("w%d/%d", w, i)}); err != nil {
							return err
						}
						_, err := tx.Exec(ctx, `INSERT INTO history (writer, n, token) VALUES ($1, $2, $3)`, w, i, token)
						return err
					})
				} else {
					res = raceSQL(t, openSQL(t, pool), iso, func(ctx context.Context, tx *sql.Tx, token int64, w, i int) error {
						if err := table.UpdateSQL(ctx, tx, "acct", token, map[string]any{"value": fmt.Sprintf("w%d/%d", w, i)}); err != nil {
							return err
						}
						_, err := tx.ExecContext(ctx, `INSERT INTO history (writer, n, token) VALUES ($1, $2, $3)`, w, i, token)
						return err
					})
				}
				checkRace(t, pool, res)
				if tok := finalToken(t, pool); tok != res.maxTried {
					t.Fatalf("final row belongs to token %d, want the highest tried, %d", tok, res.maxTried)
				}
			})
		}
	}
}

// The control for database/sql: without the guard, the history check sees
// regressions.
func TestWithoutGuardConcurrentSQLTransactionsAcceptLowerAfterHigher(t *testing.T) {
	pool, _ := setupRace(t)
	res := raceSQL(t, openSQL(t, pool), pgx.ReadCommitted, plainWriteSQL)
	tokens, _ := history(t, pool)
	n := regressions(tokens)
	t.Logf("unguarded (database/sql): %d accepted, %d regressions in the history", len(res.accepted), n)
	if n == 0 {
		t.Fatalf("no regression among %d unguarded writes with random tokens: the history check cannot see a broken fence", len(tokens))
	}
}

// accountTable creates the caller's own table account(id, value, token)
// with the row acct at token 1, and returns it as a Table.
func accountTable(t *testing.T, pool *pgxpool.Pool, store *pgfence.Store) *pgfence.Table {
	t.Helper()
	if _, err := pool.Exec(context.Background(), `
CREATE TABLE account (id text PRIMARY KEY, value text NOT NULL, token bigint NOT NULL);
INSERT INTO account VALUES ('acct', 'initial', 1);`); err != nil {
		t.Fatal(err)
	}
	table, err := store.Table(pgx.Identifier{"account"}, "id", "token")
	if err != nil {
		t.Fatal(err)
	}
	return table
}

// The same through database/sql: an overlap under snapshot isolation is a
// request to retry, matched by IsSerializationFailure, never a verdict.
func TestOverlapUnderSnapshotIsolationAsksForRetryThroughDatabaseSQL(t *testing.T) {
	for _, iso := range []pgx.TxIsoLevel{pgx.RepeatableRead, pgx.Serializable} {
		t.Run(string(iso), func(t *testing.T) {
			pool, store := newDB(t, 0)
			db := openSQL(t, pool)
			ctx := context.Background()
			table := accountTable(t, pool, store)
			guard := func(token int64) error {
				return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return store.Guard(ctx, tx, "job", token) })
			}
			if err := guard(1); err != nil {
				t.Fatal(err)
			}
			for _, op := range []struct {
				name string
				run  func(*sql.Tx, int64) error
				bump func() error
			}{
				{"guard", func(tx *sql.Tx, tok int64) error { return store.GuardSQL(ctx, tx, "job", tok) }, func() error { return guard(5) }},
				{"table update", func(tx *sql.Tx, tok int64) error {
					return table.UpdateSQL(ctx, tx, "acct", tok, map[string]any{"value": "v"})
				}, func() error { return table.UpdateSQL(ctx, db, "acct", 5, map[string]any{"value": "v5"}) }},
			} {
				tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sqlLevels[iso]})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.ExecContext(ctx, `SELECT 1`); err != nil { // takes the snapshot
					t.Fatal(err)
				}
				if err := op.bump(); err != nil { // another holder commits token 5
					t.Fatal(err)
				}
				err = op.run(tx, 6)
				_ = tx.Rollback()
				var pg *pgconn.PgError
				if !errors.Is(err, pgfence.ErrSerialization) || errors.Is(err, pgfence.ErrStale) || !errors.As(err, &pg) || pg.Code != "40001" {
					t.Fatalf("%s overlapping a commit: %v; want ErrSerialization wrapping SQLSTATE 40001, not a verdict", op.name, err)
				}
				tx, err = db.BeginTx(ctx, &sql.TxOptions{Isolation: sqlLevels[iso]})
				if err != nil {
					t.Fatal(err)
				}
				if err := op.run(tx, 6); err != nil {
					t.Fatalf("%s retry: %v", op.name, err)
				}
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
