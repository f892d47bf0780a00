package naivesemaphore_test

import (
	"context"
	"log"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/naivesemaphore"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// The broken pattern, for contrast with package semaphore: a process that
// dies before Release keeps its place forever. Compiled, not run.
func Example() {
	ctx := context.Background()
	s := naivesemaphore.New(redis.NewClient(&redis.Options{Addr: "localhost:6379"}), "naive:")
	ok, err := s.Acquire(ctx, "exports", 5)
	if err != nil || !ok {
		log.Fatal("full or down")
	}
	defer s.Release(ctx, "exports") // BUG: never runs if the process dies first
}
