package clienttest_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// WAIT counts the replicas that acknowledged the writes of its own
// connection. Sent on another connection than the script's, it answers for
// other writes, or none (then at once, with every replica): a write that
// reached no replica would be reported as replicated (lock's and fence's
// WithReplicas). With the replica cut off, WAIT after the script's write
// must wait out its timeout and answer 0.
func TestConformanceWaitCountsOnlyTheReplicasThatHaveTheScriptsWrite(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t, redistest.Own())
		replica := srv.StartReplica(t)
		rdb := srv.Client(t)
		c := k.server(t, srv)
		ctx := confCtx(t)
		key := srv.Prefix() + "n"

		r, acked, err := confCount.RunWait(ctx, c, []string{key}, nil, 1, 5*time.Second)
		if n, rerr := r.Int64(); rerr != nil || n != 1 || acked != 1 || err != nil {
			t.Errorf("RunWait with the replica up: %d, %v, acked %d, %v; want 1, acked by 1", n, rerr, acked, err)
		}

		replica.Partition(t)
		confWaitTimedOut(t, "", func(timeout time.Duration) (luascripts.Reply, int, error) {
			call := luascripts.Call{Script: confCount, Keys: []string{key}}
			acked, err := c.EvalWait(ctx, &call, 1, timeout)
			return call.Result(), acked, err
		})
		if n := confCounted(t, rdb, key); n != 2 {
			t.Errorf("the server ran the script %d times; want 2", n)
		}
	})
}

// On a Cluster, the script runs on the primary of its first key, and its
// WAIT must go to that primary, on the same connection: WAIT anywhere else
// answers for writes that are not the script's.
func TestConformanceWaitOnAClusterAsksThePrimaryOfTheCallsFirstKey(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t)
		rdb := cl.Client(t)
		c := k.cluster(t, cl)
		ctx := confCtx(t)
		key := "{wait}n"
		replica := confReplicaOf(t, cl, cl.PrimaryOf(t, key))

		r, acked, err := confCount.RunWait(ctx, c, []string{key}, nil, 1, 5*time.Second)
		if n, rerr := r.Int64(); rerr != nil || n != 1 || acked != 1 || err != nil {
			t.Errorf("RunWait with the replica up: %d, %v, acked %d, %v; want 1, acked by 1", n, rerr, acked, err)
		}

		// Frozen, the replica receives the write and acknowledges nothing:
		// for less than cluster-node-timeout, so the cluster does not
		// mark it failed.
		replica.Freeze(t)
		defer replica.Thaw(t)
		confWaitTimedOut(t, "on a Cluster ", func(timeout time.Duration) (luascripts.Reply, int, error) {
			call := luascripts.Call{Script: confCount, Keys: []string{key}}
			acked, err := c.EvalWait(ctx, &call, 1, timeout)
			return call.Result(), acked, err
		})
		replica.Thaw(t)
		if n := confCounted(t, rdb, key); n != 2 {
			t.Errorf("the server ran the script %d times; want 2", n)
		}
	})
}

// confWaitTimedOut runs evalWait, a script's second run and its WAIT for one
// replica that cannot acknowledge, and checks that WAIT waited out its
// timeout and answered 0.
func confWaitTimedOut(t *testing.T, where string, evalWait func(timeout time.Duration) (luascripts.Reply, int, error)) {
	t.Helper()
	const timeout = 300 * time.Millisecond
	start := time.Now()
	r, acked, err := evalWait(timeout)
	took := time.Since(start)
	t.Logf("%sEvalWait with the replica cut off: acked %d in %v (WAIT's timeout %v)", where, acked, took, timeout)
	if n, rerr := r.Int64(); rerr != nil || n != 2 {
		t.Errorf("%sthe script with the replica cut off: %d, %v; want 2", where, n, rerr)
	}
	if acked != 0 || err != nil {
		t.Errorf("%sWAIT with the replica cut off: acked %d, %v; want 0: WAIT was not sent on the script's connection", where, acked, err)
	}
	if took < timeout {
		t.Errorf("%sWAIT answered after %v, before its %v timeout: it was not sent on the script's connection", where, took, timeout)
	}
}

// confReplicaOf returns the node of cl that replicates primary.
func confReplicaOf(t testing.TB, cl *redistest.Cluster, primary *redistest.Server) *redistest.Server {
	t.Helper()
	info, err := primary.Client(t).Info(context.Background(), "replication").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if !strings.HasPrefix(line, "slave0:") {
			continue
		}
		for _, field := range strings.Split(line, ",") {
			if p, ok := strings.CutPrefix(field, "port="); ok {
				port, _ := strconv.Atoi(p)
				for _, n := range cl.Nodes() {
					if n.Port() == port {
						return n
					}
				}
			}
		}
	}
	t.Fatalf("no replica of %s in:\n%s", primary.Addr(), info)
	return nil
}
