// Command ratelimited-api is an HTTP API behind the rate-limit middleware
// (package ratelimit/httprate): 5 requests per 2 s and 20 per minute for
// each API key (X-API-Key), or for each client IP without one. Every answer
// carries the RateLimit-Policy and RateLimit fields; a refused request gets
// 429, Retry-After and a problem+json body.
//
//	cd examples && go run ./ratelimited-api                 # serve and drive itself: prints the 429s and headers
//	cd examples && go run ./ratelimited-api -serve :8080    # serve until Ctrl-C
//	curl -i -H 'X-API-Key: alice' localhost:8080/hello
//	curl -s localhost:8080/metrics                          # decisions by outcome and limit (Prometheus text)
//
// It starts its own redis-server unless REDIS_ADDR names one.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis-primitives/go/examples/internal/servers"
)

func main() {
	serveAddr := flag.String("serve", "", "serve on `ADDR` (e.g. :8080) until Ctrl-C instead of driving a client")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := mainErr(ctx, *serveAddr); err != nil {
		fmt.Fprintln(os.Stderr, "ratelimited-api:", err)
		os.Exit(1)
	}
}

func mainErr(ctx context.Context, serveAddr string) error {
	addr, started, stopRedis, err := servers.Redis()
	if err != nil {
		return err
	}
	defer stopRedis()
	how := "REDIS_ADDR"
	if started {
		how = "started for this run"
	}
	fmt.Printf("redis %s (%s)\n", addr, how)
	api, err := newAPI(addr, "ratelimited-api:")
	if err != nil {
		return err
	}
	defer api.close()

	listen := serveAddr
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	if serveAddr != "" {
		fmt.Printf("serving on %s; try: curl -i -H 'X-API-Key: alice' http://%s/hello, and curl http://%s/metrics\n", ln.Addr(), ln.Addr(), ln.Addr())
		return api.serve(ctx, ln)
	}
	_, err = selfDrive(ctx, api, ln, os.Stdout)
	return err
}
