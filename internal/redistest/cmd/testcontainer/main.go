// Command testcontainer starts a Redis or PostgreSQL container for the test
// fixture, prints "ready ADDR" on one line, and removes the container when its
// standard input closes. The fixture runs it only when no server binary is on
// PATH; keeping it a separate program keeps Docker's client libraries out of
// the dependencies of the modules under test.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/postgres"
	"github.com/testcontainers/testcontainers-go/modules/redis"
	"github.com/testcontainers/testcontainers-go/wait"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: testcontainer redis|postgres")
		os.Exit(2)
	}
	ctx := context.Background()
	c, addr, err := start(ctx, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "testcontainer:", err)
		os.Exit(1)
	}
	fmt.Println("ready " + addr)
	_, _ = io.Copy(io.Discard, os.Stdin) // until the fixture closes stdin
	if err := testcontainers.TerminateContainer(c); err != nil {
		fmt.Fprintln(os.Stderr, "testcontainer: terminate:", err)
		os.Exit(1)
	}
}

func start(ctx context.Context, kind string) (testcontainers.Container, string, error) {
	switch kind {
	case "redis":
		c, err := redis.Run(ctx, "redis:7.0",
			testcontainers.WithCmdArgs("--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction"))
		if err != nil {
			return c, "", err
		}
		host, err := c.Host(ctx)
		if err != nil {
			return c, "", err
		}
		port, err := c.MappedPort(ctx, "6379/tcp")
		if err != nil {
			return c, "", err
		}
		return c, fmt.Sprintf("%s:%s", host, port.Port()), nil
	case "postgres":
		c, err := postgres.Run(ctx, "postgres:15",
			postgres.WithUsername("postgres"), postgres.WithPassword("postgres"),
			testcontainers.WithWaitStrategy(wait.ForListeningPort("5432/tcp").WithStartupTimeout(2*time.Minute)))
		if err != nil {
			return c, "", err
		}
		dsn, err := c.ConnectionString(ctx, "sslmode=disable")
		return c, dsn, err
	default:
		return nil, "", fmt.Errorf("unknown kind %q", kind)
	}
}
