package naivelock_test

import (
	"context"
	"log"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/naivelock"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// The broken pattern, for contrast with package lock: if the work outlives
// the TTL, Release deletes whoever holds the lock by then. Compiled, not run.
func Example() {
	ctx := context.Background()
	l := naivelock.New(redis.NewClient(&redis.Options{Addr: "localhost:6379"}), "naive:")
	ok, err := l.Acquire(ctx, "account-42", 10*time.Second)
	if err != nil || !ok {
		log.Fatal("busy or down")
	}
	defer l.Release(ctx, "account-42") // BUG: may delete the next holder's lock
}
