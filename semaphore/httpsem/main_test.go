package httpsem_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
)

// issuer is what the runnable examples take permits from: an Issuer on
// REDIS_ADDR, or on a redis-server started for this package's tests, its
// keys under a prefix of this run's own.
var issuer *semaphore.Issuer

func TestMain(m *testing.M) {
	client, prefix, err := redistest.ExampleClient("httpsem")
	if err == nil {
		issuer, err = semaphore.New(goredisadapter.New(client), semaphore.WithPrefix(prefix))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	redistest.VerifyMain(m)
}
