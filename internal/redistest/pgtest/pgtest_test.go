package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/pgtest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

func TestEachTestGetsAnEmptyDatabaseOfItsOwn(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.NewDatabase(t), pgtest.NewDatabase(t)
	if a == b {
		t.Fatalf("two databases share %s", a)
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	if _, err := ca.Exec(ctx, "CREATE TABLE t (id int)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 't'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatal("a table created in one test's database is visible in another's")
	}
	var super bool
	if err := ca.QueryRow(ctx, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&super); err != nil {
		t.Fatal(err)
	}
	if !super {
		t.Fatal("the test role is not a superuser")
	}
}

func TestDatabaseIsDroppedWhenItsTestEnds(t *testing.T) {
	var dsn string
	t.Run("inner", func(t *testing.T) { dsn = pgtest.NewDatabase(t) })
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err == nil {
		conn.Close(ctx)
		t.Fatal("connected to a database whose test has ended")
	}
}

func TestLaunchedServerAcceptsConnectionsUntilStopped(t *testing.T) {
	dsn, stop, err := pgtest.Launch()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		_ = stop()
		t.Fatal(err)
	}
	conn.Close(ctx)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if conn, err := pgx.Connect(ctx, dsn); err == nil {
		conn.Close(ctx)
		t.Fatal("connected after stop")
	}
}
