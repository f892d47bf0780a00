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

// lingerAfterClose is how long a closed rueidis or valkey-go client's own
// goroutines may outlive it: those that close connections a Cluster
// client's slot-table refresh or a redirect replaced, or that send a
// delayed refresh, sleep up to 5 s first, then end by themselves.
const lingerAfterClose = 6 * time.Second

// lingering reports whether err, goleak's, names goroutines of rueidis or
// valkey-go, which may still be ending on their own (lingerAfterClose).
func lingering(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "github.com/redis/rueidis.") || strings.Contains(msg, "github.com/valkey-io/valkey-go.")
}
