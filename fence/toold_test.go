package fence_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// On a Redis older than 7.0 (here a 7.0 server with the commands 7.0 added
// renamed away, which answers as 6.2 does) a read says that the server is
// too old, not only the server's words.
func TestAReadARedisOlderThan7RefusesSaysItNeedsRedis7(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--rename-command", "EVALSHA_RO", "", "--rename-command", "EVAL_RO", ""))
	store, err := fence.New(goredisadapter.New(s.Client(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := store.Set(ctx, 1, "k", "v"); err != nil {
		t.Fatalf("a fenced write needs no 7.0 command: %v", err)
	}
	_, err = store.Get(ctx, "k")
	if !errors.Is(err, fence.ErrRedisTooOld) {
		t.Fatalf("Get on a server without EVALSHA_RO: %v; want ErrRedisTooOld", err)
	}
	t.Logf("the error reads: %v", err)
}
