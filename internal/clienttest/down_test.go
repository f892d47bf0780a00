package clienttest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/semaphore"
)

// The bounds the README's "Running it in production" states for a Redis
// that refuses connections, on go-redis: with its defaults, from v9.16 on,
// each of the 1+MaxRetries (3) attempts of a call dials DialerRetries (5)
// times, DialerRetryTimeout (100 ms) apart, and a pipeline (every
// primitive's call is one) pays that twice: about 3.4 s here. With
// DialerRetries: 1, as go-redis dialled before v9.16, about 0.1 s. The
// bounds leave room for a loaded machine.
const (
	refusedBoundDefaults = 5 * time.Second
	refusedBoundOneDial  = time.Second
)

// downCalls are one network call of each primitive, on a client of nothing.
func downCalls(t *testing.T, c luascripts.Client) map[string]func(context.Context) error {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	l, err := lock.New(c)
	must(err)
	s, err := semaphore.New(c)
	must(err)
	f, err := fence.New(c)
	must(err)
	rl, err := ratelimit.New(c)
	must(err)
	e, err := election.New(c, election.Config{Name: "down"})
	must(err)
	g := ratelimit.GCRA(10, time.Second, 10)
	return map[string]func(context.Context) error{
		"lock.Acquire":      func(ctx context.Context) error { _, err := l.Acquire(ctx, "job", time.Second); return err },
		"semaphore.Acquire": func(ctx context.Context) error { _, err := s.Acquire(ctx, "pool", 3, time.Second); return err },
		"fence.Set":         func(ctx context.Context) error { return f.Set(ctx, 1, "k", "v") },
		"ratelimit.Allow":   func(ctx context.Context) error { _, err := rl.Allow(ctx, "k", g); return err },
		"ratelimit.Reserve": func(ctx context.Context) error { _, err := rl.Reserve(ctx, "k", g, 1, time.Second); return err },
		"election.Leader":   func(ctx context.Context) error { _, err := e.Leader(ctx); return err },
	}
}

// A user of go-redis v9.23 saw a 3 s call to a Redis that was down end in
// "context deadline exceeded", which hides the refused connection, and the
// README said only that calls fail promptly. Every primitive's call, on a
// fresh go-redis client with its defaults and on one that dials once,
// returns within the README's bound, with the refused dial in its chain.
func TestEveryPrimitiveReportsARefusedRedisWithinTheReadmesBoundWithTheDialError(t *testing.T) {
	t.Parallel()
	port, err := redistest.FreePort() // nothing listens on it
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for _, tc := range []struct {
		name  string
		opt   redis.Options
		bound time.Duration
	}{
		{"defaults", redis.Options{Addr: addr}, refusedBoundDefaults},
		{"DialerRetries 1", redis.Options{Addr: addr, DialerRetries: 1}, refusedBoundOneDial},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each call on a client of its own, as a service starting
			// while its Redis is down: go-redis answers at once, with the
			// last dial error, only once its pool has failed PoolSize
			// dials.
			// The calls' names, from a client never used: each call then
			// runs on a client of its own.
			unused := redis.NewClient(&redis.Options{Addr: addr})
			var names []string
			for name := range downCalls(t, goredisadapter.New(unused)) {
				names = append(names, name)
			}
			_ = unused.Close()
			var wg sync.WaitGroup
			for _, name := range names {
				wg.Go(func() {
					o := tc.opt
					rdb := redis.NewClient(&o)
					defer rdb.Close()
					call, ok := downCalls(t, goredisadapter.New(rdb))[name]
					if !ok {
						t.Errorf("no call named %s", name)
						return
					}
					ctx, cancel := context.WithTimeout(context.Background(), 2*refusedBoundDefaults)
					defer cancel()
					start := time.Now()
					err := call(ctx)
					took := time.Since(start)
					t.Logf("%s: %v after %v", name, err, took.Round(time.Millisecond))
					if !errors.Is(err, syscall.ECONNREFUSED) {
						t.Errorf("%s: %v, want the refused dial in its chain", name, err)
					}
					if took > tc.bound {
						t.Errorf("%s took %v, past the README's bound of %v", name, took, tc.bound)
					}
				})
			}
			wg.Wait()
		})
	}
	confAwaitDialProbes(t)
}

// What the README's "A Redis that is down" says of a Redis that went down
// under a running client, each call with a deadline of 6 s (longer than
// go-redis's dial retries, so that the wait measured is the client's):
//
//   - go-redis: every call ends with the refused dial once its dial
//     retries end (about 3.4 s), as on a client that never connected;
//   - rueidis and valkey-go: a call sent at most once (ratelimit's) ends
//     with it at once; a call that may be sent twice (an acquire, a fence's
//     write, a read), which the adapters mark retryable when its context
//     has a deadline, rueidis sends again after each refused dial, backing
//     off up to a second, until the next try would pass that deadline.
//
// The README said a wait on rueidis and valkey-go was bounded by the
// Dialer's timeout; a refused dial takes no time, and the call waited out
// its deadline: 19.2-19.8 s of a 20 s context.
func TestARedisThatWentDownEndsACallAtOnceOrAtItsDeadlineAsTheReadmeSays(t *testing.T) {
	const deadline = 6 * time.Second
	eachClient(t, func(t *testing.T, k kind) {
		s := redistest.Start(t, redistest.Own())
		c := k.server(t, s)
		if _, err := c.Time(context.Background()); err != nil { // connected before the kill
			t.Fatal(err)
		}
		s.Kill(t)
		bound := refusedBoundDefaults
		if k.name != "go-redis" {
			bound = refusedBoundOneDial
		}
		// refused reports a call that ended as a refused dial should.
		refused := func(name string, err error, took time.Duration) {
			switch {
			case !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, luascripts.ErrReplyLost):
				// ErrReplyLost: sent on a connection the kill broke
				// (rueidis and valkey-go keep more than one).
				t.Errorf("%s: %v, want the refused dial in its chain", name, err)
			case took > bound:
				t.Errorf("%s took %v, past the README's bound of %v", name, took, bound)
			}
		}
		var wg sync.WaitGroup
		for name, call := range downCalls(t, c) {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				defer cancel()
				start := time.Now()
				err := call(ctx)
				took := time.Since(start)
				t.Logf("%s: %v after %v", name, err, took.Round(time.Millisecond))
				switch resent := k.name != "go-redis" && !strings.HasPrefix(name, "ratelimit."); {
				case !resent:
					refused(name, err, took)
				case err == nil:
					t.Errorf("%s succeeded against a killed server", name)
				case took < deadline-1500*time.Millisecond:
					t.Errorf("%s ended after %v; the README says it is sent again until about its %v deadline", name, took, deadline)
				}
				// Without a deadline no call is marked retryable.
				start = time.Now()
				err = call(context.Background())
				took = time.Since(start)
				t.Logf("%s without a deadline: %v after %v", name, err, took.Round(time.Millisecond))
				refused(name+" without a deadline", err, took)
			})
		}
		wg.Wait()
	})
	confAwaitDialProbes(t)
}
