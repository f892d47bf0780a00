package servers_test

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/examples/internal/servers"
	"github.com/redis-primitives/go/internal/redistest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// What `go run` does on a machine with nothing configured: start both
// servers, use them, stop them.
func TestStartedServersAnswerAndAreGoneAfterStop(t *testing.T) {
	t.Setenv("REDIS_ADDR", "")
	t.Setenv("DATABASE_URL", "")
	t.Setenv("PGFENCE_DSN", "")
	ctx := context.Background()

	addr, started, stop, err := servers.Redis()
	if err != nil {
		t.Fatal(err)
	}
	if !started {
		t.Fatal("Redis: not started with REDIS_ADDR empty")
	}
	c := redis.NewClient(&redis.Options{Addr: addr})
	err = c.Ping(ctx).Err()
	_ = c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	c = redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	if err := c.Ping(ctx).Err(); err == nil {
		t.Errorf("redis at %s still answers after stop", addr)
	}
	_ = c.Close()

	dsn, started, stop, err := servers.Postgres(ctx, "servers_test")
	if err != nil {
		t.Fatal(err)
	}
	if !started {
		t.Fatal("Postgres: not started with DATABASE_URL empty")
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		_ = stop()
		t.Fatal(err)
	}
	var db string
	err = conn.QueryRow(ctx, "SELECT current_database()").Scan(&db)
	_ = conn.Close(ctx)
	if err != nil || db != "servers_test" {
		t.Errorf("connected to %q, %v; want the database servers_test", db, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if conn, err := pgx.Connect(ctx, dsn); err == nil {
		_ = conn.Close(ctx)
		t.Error("postgres still accepts connections after stop")
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Logf("after stop: %v", err)
	}
}

func TestTheEnvironmentNamesTheServersToUse(t *testing.T) {
	t.Setenv("REDIS_ADDR", "redis.example:6380")
	t.Setenv("DATABASE_URL", "postgres://app:secret@db.example/app")
	addr, started, stop, err := servers.Redis()
	if err != nil || started || addr != "redis.example:6380" || stop() != nil {
		t.Errorf("Redis() = %q, started %v, %v", addr, started, err)
	}
	dsn, started, stop, err := servers.Postgres(context.Background(), "ignored")
	if err != nil || started || dsn != "postgres://app:secret@db.example/app" || stop() != nil {
		t.Errorf("Postgres() = %q, started %v, %v", dsn, started, err)
	}
	if got := servers.Redact(dsn); got != "postgres://app:xxxxx@db.example/app" {
		t.Errorf("Redact = %q", got)
	}
}
