package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// On a Redis older than 7.0 (here a 7.0 server with the commands 7.0 added
// renamed away, which answers as 6.2 does) Peek says that the server is too
// old, alone and batched, not only the server's words.
func TestAPeekARedisOlderThan7RefusesSaysItNeedsRedis7(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--rename-command", "EVALSHA_RO", "", "--rename-command", "EVAL_RO", ""))
	ctx := context.Background()
	lim := ratelimit.GCRA(10, time.Second, 10)
	for name, opts := range map[string][]ratelimit.Option{"alone": nil, "batched": {ratelimit.WithBatching(8)}} {
		l, err := ratelimit.New(goredisadapter.New(s.Client(t)), opts...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Allow(ctx, "k", lim); err != nil {
			t.Fatalf("%s: Allow needs no 7.0 command: %v", name, err)
		}
		_, err = l.Peek(ctx, "k", lim)
		if !errors.Is(err, ratelimit.ErrRedisTooOld) {
			t.Fatalf("%s: Peek on a server without EVALSHA_RO: %v; want ErrRedisTooOld", name, err)
		}
		t.Logf("%s: the error reads: %v", name, err)
	}
}
