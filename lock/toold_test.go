package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// On a server without the commands 7.0 added (here a 7.0 server with them
// renamed away, which words the refusal as 7.0 does) a call that needs them
// says that the server is too old, not only the server's words.
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

// A real Redis 6.2 runs the acquire script (EVALSHA, EVAL and SET … GET are
// all 6.2's) but refuses its first command: SET with NX and GET together is
// new in 7.0, and 6.2 answers a bare "ERR syntax error". Acquire says the
// server is too old, so that a caller (election's Run) stops instead of
// retrying a refusal no retry changes; and the read-only scripts' refusal,
// worded with backticks by 6.2, says so too. No lock is left behind.
func TestAcquireOnRedis62SaysItNeedsRedis7InsteadOfASyntaxError(t *testing.T) {
	s := redistest.Start(t)
	r := redistest.StartRedis62(t, s.Addr())
	l := newLockerOn(t, s, client(t, s, func(o *redis.Options) { o.Addr = r.Addr() }))
	ctx := context.Background()
	_, err := l.Acquire(ctx, "job", time.Second)
	if !errors.Is(err, lock.ErrRedisTooOld) {
		t.Fatalf("Acquire on Redis 6.2: %v; want ErrRedisTooOld", err)
	}
	t.Logf("Acquire: %v", err)
	if _, err := l.AcquireWait(ctx, "job", time.Second); !errors.Is(err, lock.ErrRedisTooOld) {
		t.Errorf("AcquireWait on Redis 6.2: %v; want ErrRedisTooOld", err)
	}
	_, err = l.Holder(ctx, "job")
	if !errors.Is(err, lock.ErrRedisTooOld) {
		t.Errorf("Holder on Redis 6.2: %v; want ErrRedisTooOld", err)
	}
	t.Logf("Holder: %v", err)
	if n, err := client(t, s).Exists(ctx, lockKey(s, "job"), counterKey(s, "job")).Result(); err != nil || n != 0 {
		t.Errorf("after the refusals: %d of the lock's keys exist (%v), want none", n, err)
	}
}
