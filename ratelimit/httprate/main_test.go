package httprate_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// limiter is what the runnable examples decide with: a Limiter on
// REDIS_ADDR, or on a redis-server started for this package's tests, its
// keys under a prefix of this run's own.
var limiter *ratelimit.Limiter

func TestMain(m *testing.M) {
	client, prefix, err := redistest.ExampleClient("httprate")
	if err == nil {
		limiter, err = ratelimit.New(goredisadapter.New(client), ratelimit.WithPrefix(prefix))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	redistest.VerifyMain(m)
}
