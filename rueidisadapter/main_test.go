package rueidisadapter_test

import (
	"net"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/redistest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// newRueidis returns a rueidis client made with o, with rueidis's defaults
// but for DisableCache (the primitives use no client-side caching), closed
// when t ends. One address is one server.
func newRueidis(t testing.TB, o rueidis.ClientOption) rueidis.Client {
	t.Helper()
	o.DisableCache = true
	o.ForceSingleClient = len(o.InitAddress) == 1
	rc, err := rueidis.NewClient(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	return rc
}

// addrs returns the addresses of servers.
func addrs(servers ...*redistest.Server) []string {
	var a []string
	for _, s := range servers {
		a = append(a, s.Addr())
	}
	return a
}

// dialer is a rueidis Dialer with timeout for its dials and handshakes.
func dialer(timeout time.Duration) net.Dialer { return net.Dialer{Timeout: timeout} }
