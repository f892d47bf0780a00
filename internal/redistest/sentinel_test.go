package redistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
)

// Each fault the Sentinel fixture offers moves the primary, and a failover
// client follows it: a write made after the failover lands on the new
// primary. The processes are gone once the test ends.
func TestSentinelFailsOverOnCommandKillAndFreezeAndTheClientFollows(t *testing.T) {
	var pids []int
	t.Run("inner", func(t *testing.T) {
		s := redistest.StartSentinel(t)
		for _, sv := range append(s.Servers(), s.Sentinels()...) {
			pids = append(pids, sv.Pid(t))
		}
		c := s.Client(t)
		ctx := context.Background()
		faults := []struct {
			name string
			do   func(testing.TB) redistest.Failover
		}{
			{"SENTINEL FAILOVER", s.Failover},
			{"SIGKILL", s.KillPrimary},
			{"SIGSTOP", s.FreezePrimary},
		}
		for i, f := range faults {
			old := s.Primary(t)
			fo := f.do(t)
			if fo.Old != old || fo.New == old || s.Primary(t) != fo.New {
				t.Fatalf("%s: primary %s → %s, sentinels now name %s", f.name, old.Addr(), fo.New.Addr(), s.Primary(t).Addr())
			}
			t.Logf("%s: %s → %s in %v", f.name, fo.Old.Addr(), fo.New.Addr(), fo.Took.Round(time.Millisecond))
			if fo.Took > 10*redistest.SentinelDownAfter {
				t.Errorf("%s took %v, more than 10 × down-after-milliseconds", f.name, fo.Took)
			}
			// The client may still hold a connection to the old primary,
			// now a read-only replica; go-redis retries READONLY once it has
			// switched, within a few dial timeouts.
			deadline := time.Now().Add(5 * redistest.SentinelDownAfter)
			for {
				err := c.Set(ctx, "k", i, 0).Err()
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after %s the failover client cannot write: %v", f.name, err)
				}
				time.Sleep(10 * time.Millisecond)
			}
			direct := fo.New.Client(t)
			if v, err := direct.Get(ctx, "k").Int(); err != nil || v != i {
				t.Fatalf("after %s the new primary holds k = %d, %v; want %d", f.name, v, err, i)
			}
			role, err := fo.Old.Client(t).Do(ctx, "ROLE").Slice()
			if err != nil || role[0] != "slave" {
				t.Fatalf("after %s the old primary's role is %v, %v; want a replica", f.name, role, err)
			}
		}
	})
	for _, pid := range pids {
		if alive(pid) {
			t.Fatalf("pid %d of the Sentinel fixture still runs after its test ended", pid)
		}
	}
}

// A promotion of a lagging replica loses what the old primary acknowledged
// while its replicas were cut off, and the fault measures by how much.
func TestKillPrimaryLaggingPromotesAReplicaThatLacksTheLastAcknowledgedWrites(t *testing.T) {
	s := redistest.StartSentinel(t)
	c := s.Client(t)
	ctx := context.Background()
	if err := c.Set(ctx, "before", "kept", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Primary(t).Client(t).Do(ctx, "WAIT", 2, 5000).Err(); err != nil {
		t.Fatal(err)
	}
	const writes = 100
	fo := s.KillPrimaryLagging(t, func() {
		for i := range writes {
			if err := c.Set(ctx, "during", i, 0).Err(); err != nil {
				t.Errorf("a write to the primary while its replicas are cut off: %v", err)
				return
			}
		}
	})
	direct := fo.New.Client(t)
	kept, _ := direct.Get(ctx, "before").Result()
	n, err := direct.Exists(ctx, "during").Result()
	t.Logf("promoted %s in %v, %d bytes of replication behind the killed primary; before = %q, during exists = %d",
		fo.New.Addr(), fo.Took.Round(time.Millisecond), fo.Behind, kept, n)
	if err != nil || kept != "kept" || n != 0 {
		t.Fatalf("the promoted replica holds before = %q, during exists = %d (%v): want the write before the cut only", kept, n, err)
	}
	if fo.Behind <= 0 {
		t.Fatalf("Behind = %d: the promoted replica was meant to lag", fo.Behind)
	}
}
