package redistest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
)

// The Cluster fixture is three primaries with a replica each; a manual
// failover and a killed primary each move a key's slot to the replica, the
// cluster client follows, and the key written before a manual failover
// survives it.
func TestClusterFailsOverOnCommandAndKillAndTheClientFollows(t *testing.T) {
	c := redistest.StartCluster(t)
	cc := c.Client(t)
	ctx := context.Background()
	const key = "{k}v"
	if err := cc.Set(ctx, key, "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// One name in each third of the slots (the tags of the nodes' addresses,
	// random ports, fell on one primary about 1 run in 250).
	owners := map[*redistest.Server]bool{}
	for third := range 3 {
		for i := 0; ; i++ {
			name := fmt.Sprintf("{t%d}", i)
			if redistest.KeySlot(name)*3/16384 == third {
				owners[c.PrimaryOf(t, name)] = true
				break
			}
		}
	}
	if len(owners) < 2 {
		t.Fatalf("keys in each third of the slots all on one primary: slots not spread")
	}
	fo := c.FailoverReplica(t, key)
	t.Logf("CLUSTER FAILOVER: %s → %s in %v", fo.Old.Addr(), fo.New.Addr(), fo.Took.Round(time.Millisecond))
	if v, err := cc.Get(ctx, key).Result(); err != nil || v != "before" {
		t.Fatalf("after CLUSTER FAILOVER %s = %q, %v; want the value written before", key, v, err)
	}
	fo = c.KillPrimary(t, key)
	t.Logf("SIGKILL: %s → %s in %v", fo.Old.Addr(), fo.New.Addr(), fo.Took.Round(time.Millisecond))
	if fo.Took > 10*redistest.ClusterNodeTimeout {
		t.Errorf("failover after SIGKILL took %v, more than 10 × cluster-node-timeout", fo.Took)
	}
	deadline := time.Now().Add(5 * redistest.ClusterNodeTimeout)
	for {
		err := cc.Set(ctx, key, "after", 0).Err()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after SIGKILL the cluster client cannot write: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if c.PrimaryOf(t, key) != fo.New {
		t.Fatalf("the slot moved again")
	}
}
