package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// On a Redis older than 7.0 (here a 7.0 server with the commands 7.0 added
// renamed away, which answers as 6.2 does) a call that needs them says that
// the server is too old, not only the server's words.
func TestACallARedisOlderThan7RefusesSaysItNeedsRedis7(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--rename-command", "EVALSHA_RO", "", "--rename-command", "EVAL_RO", ""))
	l := newLocker(t, s)
	ctx := context.Background()
	if _, err := l.Acquire(ctx, "job", time.Second); err != nil {
		t.Fatalf("acquire needs no 7.0 command: %v", err)
	}
	_, err := l.Holder(ctx, "job") // a read-only script
	if !errors.Is(err, lock.ErrRedisTooOld) {
		t.Fatalf("Holder on a server without EVALSHA_RO: %v; want ErrRedisTooOld", err)
	}
	t.Logf("the error reads: %v", err)
}
