// Command watch-multi-race writes one rate limiter three ways and fires the
// same burst of concurrent callers at each, to show why every primitive in
// this repository is a Lua script and not a WATCH/MULTI transaction
// (docs/decisions/0002-lua-not-watch-multi.md).
//
// The limiter is a sliding-window log: trim the entries older than the
// window, count, and record the caller if the count is below the limit.
//
//	(A) WATCH, the reads, MULTI, ZADD and EXEC sent as separate commands
//	    through go-redis's pooled client. Each command may run on a different
//	    pooled connection, so the WATCH guards a connection the EXEC never
//	    uses, and MULTI state is left behind on connections that go back to
//	    the pool. It is the easy way to get WATCH wrong in Go.
//	(B) go-redis's Watch, which pins one connection per caller for the whole
//	    transaction and retries when EXEC reports a conflict. Correct, at the
//	    cost of retries and a connection per concurrent caller.
//	(C) the project's Lua sliding-window log (package ratelimit, on the same
//	    go-redis client through goredisadapter): one atomic call.
//
// Usage: go run ./watch-multi-race [-callers 100] [-limit 5]
// It starts its own redis-server on a free port unless REDIS_ADDR is set.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
)

const window = 10 * time.Second

type outcome struct {
	variant  string
	admitted int64 // callers told "allowed"
	recorded int64 // entries the server holds afterwards
	errors   int64 // callers that got an error instead of a decision
	retries  int64
	conns    int64 // connections dialled
	elapsed  time.Duration
	firstErr string
}

func main() {
	callers := flag.Int("callers", 100, "concurrent callers")
	limit := flag.Int("limit", 5, "requests allowed per window")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	addr, closeServer, err := server()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer closeServer()

	fmt.Printf("%d concurrent callers, limit %d per %v, redis %s\n\n", *callers, *limit, window, addr)
	var notes []string
	fmt.Printf("%-44s %9s %9s %7s %8s %6s %9s\n", "variant", "admitted", "recorded", "errors", "retries", "conns", "elapsed")
	for _, v := range variants {
		o, err := run(ctx, addr, "", v, *callers, *limit)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%-44s %5d/%-3d %9d %7d %8d %6d %9v\n", o.variant, o.admitted, *limit, o.recorded,
			o.errors, o.retries, o.conns, o.elapsed.Round(100*time.Microsecond))
		if o.firstErr != "" {
			notes = append(notes, fmt.Sprintf("%s: first error: %s", o.variant[:3], o.firstErr))
		}
	}
	for _, n := range notes {
		fmt.Println(n)
	}
}

type variant struct {
	name  string
	allow func(ctx context.Context, c *redis.Client, key string, limit int, retries *int64) (bool, error)
	// recorded counts the requests the server holds for key afterwards.
	recorded func(ctx context.Context, c *redis.Client, key string, limit int) (int64, error)
}

var variants = []variant{
	{"(A) WATCH/MULTI/EXEC through the pool", pooledWatch, zcard},
	{"(B) go-redis Watch, a connection per caller", dedicatedWatch, zcard},
	{"(C) Lua sliding-window log", luaLog, luaRecorded},
}

func zcard(ctx context.Context, c *redis.Client, key string, _ int) (int64, error) {
	return c.ZCard(ctx, key).Result()
}

func run(ctx context.Context, addr, prefix string, v variant, callers, limit int) (outcome, error) {
	o := outcome{variant: v.name}
	var dialer net.Dialer
	c := redis.NewClient(&redis.Options{
		Addr: addr, PoolSize: callers, DisableIdentity: true, MaxRetries: -1,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			atomic.AddInt64(&o.conns, 1)
			return dialer.DialContext(ctx, network, addr)
		},
	})
	defer c.Close()
	key := prefix + "experiment:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ok, err := v.allow(ctx, c, key, limit, &o.retries)
			switch {
			case err != nil:
				if atomic.AddInt64(&o.errors, 1) == 1 {
					o.firstErr = err.Error()
				}
			case ok:
				atomic.AddInt64(&o.admitted, 1)
			}
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	o.elapsed = time.Since(t0)
	// A fresh client: pooled connections of (A) may still be inside MULTI.
	check := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
	defer check.Close()
	n, err := v.recorded(ctx, check, key, limit)
	if err != nil {
		return o, err
	}
	o.recorded = n
	return o, nil
}

// pooledWatch is the broken version: every command is its own round trip
// through the pool, so WATCH, MULTI and EXEC need not share a connection.
func pooledWatch(ctx context.Context, c *redis.Client, key string, limit int, _ *int64) (bool, error) {
	now := time.Now()
	if err := c.Do(ctx, "WATCH", key).Err(); err != nil {
		return false, err
	}
	if err := c.ZRemRangeByScore(ctx, key, "-inf", score(now.Add(-window))).Err(); err != nil {
		return false, err
	}
	n, err := c.ZCard(ctx, key).Result()
	if err != nil {
		return false, err
	}
	if n >= int64(limit) {
		return false, c.Do(ctx, "UNWATCH").Err()
	}
	if err := c.Do(ctx, "MULTI").Err(); err != nil {
		return false, err
	}
	if err := c.ZAdd(ctx, key, redis.Z{Score: float64(now.UnixMicro()), Member: member()}).Err(); err != nil {
		return false, err
	}
	if err := c.Do(ctx, "EXEC").Err(); err != nil {
		return false, err
	}
	return true, nil
}

// dedicatedWatch is the correct WATCH: one connection for the transaction,
// and a retry whenever another caller touched the key between WATCH and EXEC.
func dedicatedWatch(ctx context.Context, c *redis.Client, key string, limit int, retries *int64) (bool, error) {
	for attempt := 0; attempt < 1000; attempt++ {
		var allowed bool
		err := c.Watch(ctx, func(tx *redis.Tx) error {
			now := time.Now()
			// Reads before MULTI run on the pinned connection, under WATCH.
			if err := tx.ZRemRangeByScore(ctx, key, "-inf", score(now.Add(-window))).Err(); err != nil {
				return err
			}
			n, err := tx.ZCard(ctx, key).Result()
			if err != nil {
				return err
			}
			if n >= int64(limit) {
				allowed = false
				return nil
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.ZAdd(ctx, key, redis.Z{Score: float64(now.UnixMicro()), Member: member()})
				return nil
			})
			allowed = err == nil
			return err
		}, key)
		if errors.Is(err, redis.TxFailedErr) {
			atomic.AddInt64(retries, 1)
			continue
		}
		return allowed, err
	}
	return false, errors.New("gave up after 1000 conflicts")
}

var seq atomic.Int64

func member() string { return strconv.FormatInt(seq.Add(1), 10) }

func score(t time.Time) string { return strconv.FormatInt(t.UnixMicro(), 10) }

// server returns REDIS_ADDR, or starts a redis-server of its own.
func server() (string, func(), error) {
	if addr := os.Getenv("REDIS_ADDR"); addr != "" {
		return addr, func() {}, nil
	}
	s, err := redistest.Launch()
	if err != nil {
		return "", nil, err
	}
	return s.Addr(), func() { _ = s.Close() }, nil
}
