package redistest

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// newClient returns a go-redis client of opt, closed when t ends. The
// primitives' suites run on go-redis, through goredisadapter; their tests
// that depend on the client (killed connections, frozen servers, Cluster,
// wake-ups) run on every client in internal/clienttest.
func newClient(t testing.TB, opt *redis.Options) *redis.Client {
	t.Helper()
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newFailoverClient is newClient for a Sentinel-monitored primary.
func newFailoverClient(t testing.TB, opt *redis.FailoverOptions) *redis.Client {
	t.Helper()
	c := redis.NewFailoverClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// lingerAfterClose is how long a closed client's own goroutines may
// outlive it: rueidis's and valkey-go's that close connections a Cluster
// client's slot-table refresh or a redirect replaced, or that send a
// delayed refresh, sleep up to 5 s first, then end by themselves; and
// go-redis's probe of a server it failed to dial (v9.23's tryDial) sleeps a
// second between dials and ends at the first after its pool closed. The
// lease core's give-back of an acquire whose reply never came holds no
// goroutine between its tries; one in a try (leasecore.(*giveBack).try)
// ends with its release, at once on a closed client.
const lingerAfterClose = 6 * time.Second

// lingering reports whether err, goleak's, names goroutines of a closed
// client that may still be ending on their own (lingerAfterClose).
func lingering(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "github.com/redis/rueidis.") || strings.Contains(msg, "github.com/valkey-io/valkey-go.") ||
		strings.Contains(msg, "github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial") ||
		strings.Contains(msg, "github.com/redis-primitives/go/internal/luascripts/leasecore.(*giveBack).try")
}
