package httpsem_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
)

// issuer is what the runnable examples take permits from: an Issuer on
// REDIS_ADDR, or on a redis-server started for this package's tests, its
// keys under a prefix of this run's own.
var issuer *semaphore.Issuer

func TestMain(m *testing.M) {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		s, err := redistest.Launch()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		redistest.AtExit(func() { _ = s.Close() })
		addr = s.Addr()
	}
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	redistest.AtExit(func() { _ = client.Close() })
	var err error
	issuer, err = semaphore.New(client, semaphore.WithPrefix("httpsem-example-"+rand.Text()[:8]+":"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	redistest.VerifyMain(m)
}
