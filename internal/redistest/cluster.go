package redistest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartClusterNode starts a one-node Redis Cluster that owns every slot and
// returns a cluster client for it, closed when t ends. A real cluster node
// refuses a script whose keys span slots (CROSSSLOT), so a test that runs a
// script on it proves the script's keys share a hash slot.
func StartClusterNode(t testing.TB) (*Server, *redis.ClusterClient) {
	t.Helper()
	s := Start(t, Own(), Args("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"))
	ctx := context.Background()
	admin := s.Client(t)
	if err := admin.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		t.Fatalf("redistest: cluster addslots: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := admin.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: cluster not ok within 10s: %s %v", info, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{s.Addr()}, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = cc.Close() })
	return s, cc
}
