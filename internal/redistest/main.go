package redistest

import (
	"crypto/rand"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

var (
	atExitMu sync.Mutex
	atExit   []func()
)

// AtExit registers f to run after the package's tests, before the goroutine
// leak check. Fixtures shared by a package's tests (a PostgreSQL server) stop
// themselves this way.
func AtExit(f func()) {
	atExitMu.Lock()
	defer atExitMu.Unlock()
	atExit = append(atExit, f)
}

// VerifyMain is the TestMain of every package in this repository: it runs
// the tests, stops the servers shared across them, and then fails the run if
// any goroutine outlived them.
//
//	func TestMain(m *testing.M) { redistest.VerifyMain(m) }
func VerifyMain(m *testing.M, opts ...goleak.Option) {
	code := m.Run()
	atExitMu.Lock()
	for i := len(atExit) - 1; i >= 0; i-- {
		atExit[i]()
	}
	atExit = nil
	atExitMu.Unlock()
	if code == 0 {
		err := goleak.Find(opts...)
		if err != nil && lingering(err) {
			time.Sleep(lingerAfterClose)
			err = goleak.Find(opts...)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "goleak: goroutines outlived the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// skipLong skips t under go test -short: what needs the setup named takes
// seconds to start and fail over, too long for the quick inner loop.
func skipLong(t testing.TB, setup string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("redistest: %s takes seconds to start and fail over: skipped under -short (make test-quick); make test runs it", setup)
	}
}

// ExampleClient returns a client for a package's runnable examples, for
// its TestMain to make before VerifyMain: a client of REDIS_ADDR, or of a
// redis-server started for the package's tests and stopped at exit (both
// closed by VerifyMain), and a key prefix of this run's own, under name.
func ExampleClient(name string) (*redis.Client, string, error) {
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		s, err := Launch()
		if err != nil {
			return nil, "", err
		}
		AtExit(func() { _ = s.Close() })
		addr = s.Addr()
	}
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	AtExit(func() { _ = client.Close() })
	return client, name + "-example-" + rand.Text()[:8] + ":", nil
}
