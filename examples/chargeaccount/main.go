// Command chargeaccount runs a "charge an invoice" job twice at once, as a
// job queue does when it retries a worker it believes dead, with the job
// guarded by a lock (package lock) and its database transaction fenced by
// the lock's token (package pgfence).
//
// Worker 1 takes the lock, reads the invoice (not charged yet) and calls a
// slow payment provider; it does not renew its lease, as a worker paused in
// garbage collection would not. Its lease expires. Worker 2 takes the lock
// with a higher token, finds the invoice not charged either, charges it and
// commits. Then worker 1 comes back and commits its own charge: pgfence.Guard
// refuses it, because its token is lower than the one the database has
// already accepted. The account is charged once.
//
//	cd examples && go run ./chargeaccount            # fenced: the stale charge is refused
//	cd examples && go run ./chargeaccount -unfenced  # the same without Guard: charged twice
//
// It starts its own redis-server and PostgreSQL unless REDIS_ADDR and
// DATABASE_URL (or PGFENCE_DSN) name servers to use.
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
	flag.DurationVar(&cfg.lease, "lease", 300*time.Millisecond, "the lock's lease")
	flag.DurationVar(&cfg.slow, "slow", 700*time.Millisecond, "how long worker 1's payment provider takes (longer than -lease)")
	flag.BoolVar(&cfg.unfenced, "unfenced", false, "commit without pgfence.Guard, to see the double charge it prevents")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := mainErr(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "chargeaccount:", err)
		os.Exit(1)
	}
}

func mainErr(ctx context.Context, cfg config) error {
	addr, dsn, stop, err := servers.Both(ctx, "chargeaccount", os.Stdout)
	if err != nil {
		return err
	}
	defer stop()
	cfg.redisAddr, cfg.dsn = addr, dsn
	_, err = run(ctx, cfg, os.Stdout)
	return err
}
