// Command demo runs every failure this repository exists to prevent next to
// its fix, against a real redis-server, and prints what it measured.
//
//	cd examples && go run ./demo [-json FILE] [-svg FILE]
//
// It starts its own redis-server on a free loopback port and stops it when it
// is done, also on Ctrl-C. With REDIS_ADDR set it uses that server instead,
// under a key prefix of its own that it deletes afterwards. Every figure
// comes from the run: nothing is a constant. It exits 0 only if every
// failure showed and every fix held.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// The split-brain scenario runs its old leader in a process of its own,
	// this very binary started again, so that it can be frozen for real.
	if code, child := childMain(); child {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
