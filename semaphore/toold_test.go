package semaphore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
)

// On a Redis older than 7.0 (here a 7.0 server with EVALSHA_RO and EVAL_RO
// renamed away, which answers as 6.2 does) a read-only script's call says
// that the server is too old, not only the server's words.
func TestHoldersOnARedisOlderThan7SaysItNeedsRedis7(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--rename-command", "EVALSHA_RO", "", "--rename-command", "EVAL_RO", ""))
	i := newIssuer(t, s)
	mustAcquire(t, i, "job", 1, time.Second) // needs no 7.0 command
	_, err := i.Holders(context.Background(), "job")
	if !errors.Is(err, semaphore.ErrRedisTooOld) {
		t.Fatalf("Holders on a server without EVALSHA_RO: %v; want ErrRedisTooOld", err)
	}
	t.Logf("the error reads: %v", err)
}
