// Command bench starts a redis-server of its own on a free loopback port and
// measures this project's lock, rate limiters and election against the
// libraries users would pick instead, with redis-benchmark's figure for a
// trivial script beside them (see package bench and BENCHMARKS.md).
//
//	go run ./cmd/bench [-duration 2s] [-goroutines 50] [-rounds 3] [-json FILE] [-quick]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis-primitives/go/bench"
	"github.com/redis-primitives/go/internal/redistest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	def := bench.DefaultConfig()
	quick := flag.Bool("quick", false, "smoke run of a few seconds: every row, figures too rough to quote")
	duration := flag.Duration("duration", def.Duration, "how long each contender runs in each round")
	goroutines := flag.Int("goroutines", def.Goroutines, "goroutines calling each library at once (and redis-benchmark clients)")
	rounds := flag.Int("rounds", def.Rounds, "rounds; the order of the libraries alternates between rounds")
	keys := flag.Int("keys", def.Keys, "size of the many-keys key space")
	trials := flag.Int("trials", def.Trials, "election handovers and failovers to time")
	jsonFile := flag.String("json", "", "also write the figures as JSON to this file")
	flag.Parse()

	cfg := def
	if *quick {
		cfg = bench.QuickConfig()
	}
	// Flags given explicitly override the defaults and -quick alike.
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "duration":
			cfg.Duration = *duration
		case "goroutines":
			cfg.Goroutines = *goroutines
		case "rounds":
			cfg.Rounds = *rounds
		case "keys":
			cfg.Keys = *keys
		case "trials":
			cfg.Trials = *trials
		}
	})
	cfg.Log = os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	s, err := redistest.Launch()
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(os.Stderr, "redis-server on %s\n", s.Addr())

	rep, err := bench.Run(ctx, s.Addr(), cfg)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return errors.New("interrupted; the redis-server it started is stopped")
		}
		return err
	}
	rep.Print(os.Stdout)
	if *jsonFile != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonFile, append(b, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "figures written to %s\n", *jsonFile)
	}
	return nil
}
