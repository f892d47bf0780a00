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
//	cd examples && go run ./scheduler [-nodes 3] [-every 200ms] [-for 3s] [-metrics 127.0.0.1:9464]
//
// With -for 0 it runs until Ctrl-C and stops no leader on its own. With
// -metrics it serves /metrics (Prometheus text, through package telemetry
// and OpenTelemetry's Prometheus exporter) on that address during the run
// and afterwards until Ctrl-C: each node's elections, leader changes and
// fenced writes, stale ones refused included. It starts
// its own redis-server and PostgreSQL unless REDIS_ADDR and DATABASE_URL
// (or PGFENCE_DSN) name servers to use.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis-primitives/go/examples/internal/promtel"
	"github.com/redis-primitives/go/examples/internal/servers"
)

func main() {
	cfg := config{}
	flag.IntVar(&cfg.nodes, "nodes", 3, "how many nodes contend")
	flag.DurationVar(&cfg.every, "every", 200*time.Millisecond, "how often the job fires")
	flag.DurationVar(&cfg.runFor, "for", 3*time.Second, "how long to run; 0 runs until Ctrl-C without a scripted handover")
	flag.DurationVar(&cfg.lease, "lease", time.Second, "the leader's lease")
	metricsAddr := flag.String("metrics", "", "serve /metrics on `ADDR` (e.g. 127.0.0.1:9464) during the run and after it until Ctrl-C")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := mainErr(ctx, cfg, *metricsAddr); err != nil {
		fmt.Fprintln(os.Stderr, "scheduler:", err)
		os.Exit(1)
	}
}

func mainErr(ctx context.Context, cfg config, metricsAddr string) error {
	cfg.metrics = promtel.New()
	defer cfg.metrics.Shutdown(context.Background())
	var stopMetrics func() error
	if metricsAddr != "" {
		ln, err := net.Listen("tcp", metricsAddr)
		if err != nil {
			return err
		}
		stopMetrics = serveMetrics(ln, cfg.metrics.Handler())
		fmt.Printf("metrics on http://%s/metrics\n", ln.Addr())
	}
	addr, dsn, stop, err := servers.Both(ctx, "scheduler", os.Stdout)
	if err != nil {
		return errors.Join(err, stopIf(stopMetrics))
	}
	defer stop()
	cfg.redisAddr, cfg.dsn = addr, dsn
	_, err = run(ctx, cfg, os.Stdout)
	if ctx.Err() != nil && cfg.runFor == 0 {
		err = nil // Ctrl-C is how -for 0 ends
	}
	if err == nil && stopMetrics != nil && ctx.Err() == nil {
		fmt.Println("\nthe run is over; /metrics is still served until Ctrl-C")
		<-ctx.Done()
	}
	return errors.Join(err, stopIf(stopMetrics))
}

// serveMetrics serves /metrics on ln until the returned stop is called.
func serveMetrics(ln net.Listener, h http.Handler) (stop func() error) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(ctx)
		if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		return err
	}
}

func stopIf(stop func() error) error {
	if stop == nil {
		return nil
	}
	return stop()
}
