package redistest

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

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
