package clienttest_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/luascripts"
)

// The conformance suite of the contract (luascripts.Client). Its tests
// are named TestConformance..., so that -run Conformance selects them all;
// its helpers are named conf..., apart from the primitives' tests' helpers
// in this package.

// The scripts the suite sends. Each counts its runs in a key, read back
// with go-redis, so that a test knows how often the server ran a call.
var (
	// confCount counts its runs in KEYS[1] and returns the count.
	confCountSrc = "return redis.call('INCR', KEYS[1])"
	confCount    = luascripts.New("count", confCountSrc)
	// confRead returns KEYS[1]'s value; it cannot write.
	confRead = luascripts.NewReadOnly("read", "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])")
)

// confCtx bounds a test's calls, so that a client that hangs fails the
// test rather than the run. Every call of the suite has a deadline unless
// the test is about a context without one.
func confCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// confCounted returns the integer at key (0 if absent), read with go-redis.
func confCounted(t testing.TB, rdb redis.Cmdable, key string) int64 {
	t.Helper()
	n, err := rdb.Get(context.Background(), key).Int64()
	if err != nil && err != redis.Nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	return n
}

// confLoad loads scripts into the server rdb talks to (every primary, for
// a Cluster client), so that the first EVALSHA of each runs it.
func confLoad(t testing.TB, rdb redis.Scripter, scripts ...*luascripts.Script) {
	t.Helper()
	for _, s := range scripts {
		if err := rdb.ScriptLoad(context.Background(), s.Source()).Err(); err != nil {
			t.Fatalf("SCRIPT LOAD %s: %v", s.Name(), err)
		}
	}
}

// confCalls returns how many times the server ran cmd (INFO commandstats).
func confCalls(t testing.TB, rdb *redis.Client, cmd string) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatalf("INFO commandstats: %v", err)
	}
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls=")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest+",", ',')], 10, 64)
		return n
	}
	return 0
}

// confErrorstat returns how many error replies with code the server sent
// (INFO errorstats).
func confErrorstat(t testing.TB, rdb *redis.Client, code string) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "errorstats").Result()
	if err != nil {
		t.Fatalf("INFO errorstats: %v", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "errorstat_"+code+":count="); ok {
			n, _ := strconv.ParseInt(rest, 10, 64)
			return n
		}
	}
	return 0
}

// confReplyError returns the *luascripts.ReplyError in err's chain, or nil.
func confReplyError(err error) *luascripts.ReplyError {
	var re *luascripts.ReplyError
	if errors.As(err, &re) {
		return re
	}
	return nil
}

// confPerKind collects a value from each kind's subtest, for a test that
// compares the kinds with each other once all have run.
type confPerKind[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

func (p *confPerKind[V]) set(k kind, v V) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]V{}
	}
	p.m[k.name] = v
}

// confEachClientThen runs f on every kind, in parallel, and then, once all
// have ended, compare.
func confEachClientThen(t *testing.T, f func(t *testing.T, k kind), compare func()) {
	t.Helper()
	t.Run("kinds", func(t *testing.T) { eachClient(t, f) })
	compare()
}

// confWake waits up to within for a value on wake, and reports whether one
// came.
func confWake(wake <-chan struct{}, within time.Duration) bool {
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-wake:
		return true
	case <-t.C:
		return false
	}
}

// confClosedClient returns a client of tg that made one call and was then
// closed, as a service closes its client on shutdown while calls are still
// coming.
func confClosedClient(t *testing.T, k kind, tg target) luascripts.Client {
	t.Helper()
	var c luascripts.Client
	t.Run("then closed", func(t *testing.T) { // its cleanup closes the client
		c = k.client(t, tg)
		if _, err := c.Time(confCtx(t)); err != nil {
			t.Fatalf("TIME before the close: %v", err)
		}
	})
	return c
}
