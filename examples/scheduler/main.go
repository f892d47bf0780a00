// Command scheduler is a cron-like scheduler run by several nodes of which
// only the elected leader (package election) fires the job, and whose job
// runs record their result in PostgreSQL through pgfence.Guard with the
// leader's epoch.
//
// Three nodes contend; the leader fires the job "digest" every 200 ms, each
// run in a goroutine of its own, as schedulers do. Halfway through, the
// leader is stopped as if for a deploy, right after it fired a run that
// takes longer than usual. The leader releases its lease on the way out, so
// another node is elected within milliseconds, with a higher epoch, and
// fires the next runs. When the slow run of the old term finally finishes,
// its write carries the old epoch and Guard refuses it: nothing the old
// term does reaches the database once the new term has written.
//
//	cd examples && go run ./scheduler [-nodes 3] [-every 200ms] [-for 3s]
//
// With -for 0 it runs until Ctrl-C and stops no leader on its own. It starts
// its own redis-server and PostgreSQL unless REDIS_ADDR and DATABASE_URL
// (or PGFENCE_DSN) name servers to use.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis-primitives/go/examples/internal/servers"
)

func main() {
	cfg := config{}
	flag.IntVar(&cfg.nodes, "nodes", 3, "how many nodes contend")
	flag.DurationVar(&cfg.every, "every", 200*time.Millisecond, "how often the job fires")
	flag.DurationVar(&cfg.runFor, "for", 3*time.Second, "how long to run; 0 runs until Ctrl-C without a scripted handover")
	flag.DurationVar(&cfg.lease, "lease", time.Second, "the leader's lease")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := mainErr(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "scheduler:", err)
		os.Exit(1)
	}
}

func mainErr(ctx context.Context, cfg config) error {
	addr, dsn, stop, err := servers.Both(ctx, "scheduler", os.Stdout)
	if err != nil {
		return err
	}
	defer stop()
	cfg.redisAddr, cfg.dsn = addr, dsn
	_, err = run(ctx, cfg, os.Stdout)
	if ctx.Err() != nil && cfg.runFor == 0 {
		return nil // Ctrl-C is how -for 0 ends
	}
	return err
}
