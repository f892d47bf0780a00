package rueidisadapter_test

import (
	"testing"

	"github.com/redis/rueidis"
	"go.uber.org/goleak"

	"github.com/redis-primitives/go/internal/redistest"
)

// rueidis's Cluster client closes the connections a slot-table refresh
// dropped 5 s after the refresh, from a goroutine that outlives Close by
// as much; it is rueidis's own and ends by itself.
func TestMain(m *testing.M) {
	redistest.VerifyMain(m, goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*clusterClient)._refresh.func2"))
}

// newRueidis returns a rueidis client of addrs (a Cluster's nodes, or one
// server), closed when t ends.
func newRueidis(t testing.TB, addrs ...string) rueidis.Client {
	t.Helper()
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: addrs, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	return rc
}
