package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
)

// demo is the server the scenarios run against and the clients they use.
type demo struct {
	addr    string
	prefix  string            // every key the demo writes starts with it
	owned   *redistest.Server // the server the demo started; nil with REDIS_ADDR
	version string
	pid     int // the server's process id, as the server reports it
	log     io.Writer

	mu      sync.Mutex
	clients []*redis.Client
}

// connect starts a redis-server on a free loopback port, or uses REDIS_ADDR
// under a key prefix of its own.
func connect(ctx context.Context, log io.Writer) (*demo, error) {
	d := &demo{log: log}
	if addr := os.Getenv("REDIS_ADDR"); addr != "" {
		d.addr, d.prefix = addr, "demo:"+randomHex(4)+":"
	} else {
		s, err := redistest.Launch()
		if err != nil {
			return nil, err
		}
		d.owned, d.addr, d.prefix = s, s.Addr(), "demo:"
	}
	info, err := d.client().Info(ctx, "server").Result()
	if err != nil {
		d.close()
		return nil, fmt.Errorf("redis at %s: %w", d.addr, err)
	}
	d.version, d.pid = infoField(info, "redis_version"), atoi(infoField(info, "process_id"))
	return d, nil
}

// describe says which server the demo runs against, for the table's heading.
func (d *demo) describe() string {
	if d.owned != nil {
		return fmt.Sprintf("redis-server %s on %s, started by the demo (pid %d)", d.version, d.addr, d.pid)
	}
	return fmt.Sprintf("redis-server %s on %s (REDIS_ADDR), keys under %q", d.version, d.addr, d.prefix)
}

// client returns a new client of the server, closed by close. Context
// deadlines bound every call, so a scenario ends on time when the demo is
// interrupted or a server stalls.
func (d *demo) client(tune ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{
		Addr:                  d.addr,
		ContextTimeoutEnabled: true,
		DialTimeout:           time.Second,
		ReadTimeout:           time.Second,
		WriteTimeout:          time.Second,
	}
	for _, f := range tune {
		f(o)
	}
	c := redis.NewClient(o)
	d.mu.Lock()
	d.clients = append(d.clients, c)
	d.mu.Unlock()
	return c
}

// close deletes the demo's keys from a shared server, closes every client
// and stops the server the demo started.
func (d *demo) close() error {
	var errs []error
	if d.owned == nil && d.prefix != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, deletePrefix(ctx, d.client(), d.prefix))
		cancel()
	}
	d.mu.Lock()
	for _, c := range d.clients {
		_ = c.Close()
	}
	d.clients = nil
	d.mu.Unlock()
	if d.owned != nil {
		errs = append(errs, d.owned.Close())
		d.owned = nil
	}
	return errors.Join(errs...)
}

// deletePrefix removes every key that starts with prefix.
func deletePrefix(ctx context.Context, c *redis.Client, prefix string) error {
	iter := c.Scan(ctx, 0, escapeGlob(prefix)+"*", 500).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("delete the demo's keys: %w", err)
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := c.Unlink(ctx, keys[:n]...).Err(); err != nil {
			return fmt.Errorf("delete the demo's keys: %w", err)
		}
		keys = keys[n:]
	}
	return nil
}

func escapeGlob(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`)
	return r.Replace(s)
}

func infoField(info, name string) string {
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return "?"
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// sleepUntil waits until t or until ctx ends, and reports whether ctx is
// still live.
func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// waitFor polls cond every millisecond until it holds, ctx ends or within
// passes.
func waitFor(ctx context.Context, within time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(within)
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %v", what, within)
		}
		if err := sleepUntil(ctx, time.Now().Add(time.Millisecond)); err != nil {
			return err
		}
	}
}
