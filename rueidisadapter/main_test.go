package rueidisadapter_test

import (
	"testing"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/redistest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

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
