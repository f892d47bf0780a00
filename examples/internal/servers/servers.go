// Package servers gives the runnable examples their Redis and PostgreSQL:
// the one named in the environment, or one started on a free loopback port
// for the run and stopped afterwards.
package servers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/pgtest"
)

// Redis returns REDIS_ADDR if it is set, with a stop that does nothing;
// otherwise it starts a redis-server and stop stops it. started says which.
func Redis() (addr string, started bool, stop func() error, err error) {
	if addr := os.Getenv("REDIS_ADDR"); addr != "" {
		return addr, false, func() error { return nil }, nil
	}
	s, err := redistest.Launch()
	if err != nil {
		return "", false, nil, err
	}
	return s.Addr(), true, s.Close, nil
}

// Postgres returns DATABASE_URL, or else PGFENCE_DSN (the variable the
// tests read), if one is set, with a stop that does nothing; otherwise it
// starts a PostgreSQL server (initdb and postgres from PATH or
// /usr/lib/postgresql/*/bin), creates a database for the example in it, and
// stop stops the server.
func Postgres(ctx context.Context, database string) (dsn string, started bool, stop func() error, err error) {
	for _, env := range []string{"DATABASE_URL", "PGFENCE_DSN"} {
		if dsn := os.Getenv(env); dsn != "" {
			return dsn, false, func() error { return nil }, nil
		}
	}
	admin, stop, err := pgtest.Launch()
	if err != nil {
		return "", false, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		_ = stop()
		return "", false, nil, fmt.Errorf("connect to the started PostgreSQL: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{database}.Sanitize()); err != nil {
		_ = stop()
		return "", false, nil, fmt.Errorf("create database %s: %w", database, err)
	}
	cfg, err := pgx.ParseConfig(admin)
	if err != nil {
		_ = stop()
		return "", false, nil, err
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, database), true, stop, nil
}

// RandomHex returns 2n random hexadecimal digits, to keep the names one run
// creates apart from another's on a shared server.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// Redact returns dsn with any password replaced by "xxxxx", for printing.
func Redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	return u.Redacted()
}

// Both gives an example its Redis and a PostgreSQL database named database
// (see Redis and Postgres), prints where each came from to w, and returns a
// stop that stops whatever was started.
func Both(ctx context.Context, database string, w io.Writer) (redisAddr, dsn string, stop func(), err error) {
	addr, startedRedis, stopRedis, err := Redis()
	if err != nil {
		return "", "", nil, err
	}
	dsn, startedPG, stopPG, err := Postgres(ctx, database)
	if err != nil {
		_ = stopRedis()
		return "", "", nil, err
	}
	fmt.Fprintf(w, "redis %s (%s), postgres %s (%s)\n",
		addr, origin(startedRedis, "REDIS_ADDR"), Redact(dsn), origin(startedPG, "DATABASE_URL or PGFENCE_DSN"))
	return addr, dsn, func() { _ = stopPG(); _ = stopRedis() }, nil
}

func origin(started bool, env string) string {
	if started {
		return "started for this run"
	}
	return env
}
