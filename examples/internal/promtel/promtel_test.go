package promtel_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/redis-primitives/go/examples/internal/promtel"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/telemetry"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// Two nodes of one process on one registry must not collide: each series
// carries its node's service_instance_id, and a scrape reads each apart.
func TestTwoNodesOnOneRegistryAreScrapedApartByInstance(t *testing.T) {
	m := promtel.New()
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	for _, node := range []string{"node-1", "node-2"} {
		tel, err := m.Telemetry("test", node)
		if err != nil {
			t.Fatal(err)
		}
		tel.RecordFenceWrite(context.Background(), telemetry.FenceWrite{Store: "s3", Operation: "put", Token: 1, Accepted: node == "node-1"})
	}
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	scrape, err := promtel.Get(srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"service_instance_id": "node-1", "fence_outcome": "accepted"}, 1},
		{map[string]string{"service_instance_id": "node-2", "fence_outcome": "stale"}, 1},
		{map[string]string{"service_instance_id": "node-2", "fence_outcome": "accepted"}, 0},
		{map[string]string{"fence_store": "s3"}, 2},
	} {
		if got, _ := scrape.Sum("fence_writes_total", c.labels); got != c.want {
			t.Errorf("fence_writes_total%v = %v, want %v", c.labels, got, c.want)
		}
	}
}
