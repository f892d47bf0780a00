package clienttest_test

import (
	"flag"
	"runtime"
	"strconv"
	"testing"

	"github.com/redis-primitives/go/internal/redistest"
)

// TestMain runs as many tests at once as there are kinds, unless -parallel
// says otherwise: a test's kinds run in parallel (eachClient), and so do
// the long fault runs (eachClientLong), which wait on servers far more
// than they compute. The default, GOMAXPROCS (2 on the machines this runs
// on), would run the kinds of one test one after another; twice the kinds
// overloaded two cores beside make test's other module (load average 11,
// a third of it in the kernel), and timing tests failed by hundreds of
// milliseconds.
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", strconv.Itoa(max(runtime.GOMAXPROCS(0), len(kinds))))
	}
	redistest.VerifyMain(m)
}
