package lock_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// Redis Cluster moves a slot's keys to another node one at a time
// (resharding), so for a moment a lock and its counter sit on two nodes
// and the acquire script, which needs both, is refused with TRYAGAIN: it
// did not run. go-redis gives up after a few quick redirects, and each
// such call reached the caller as an error. Moving the slot in use back
// and forth while locks are taken and released on it, no call may fail,
// and no token may go back.
func TestAcquireAndReleaseDoNotFailWhileTheirSlotMigrates(t *testing.T) {
	cl := redistest.StartCluster(t)
	c := cl.PrimitiveClient(t)
	ctx := context.Background()
	l, err := lock.New(c, lock.WithPrefix("reshard:"))
	if err != nil {
		t.Fatal(err)
	}
	// Names whose keys share one slot, so that every migration moves them.
	slot, err := c.ClusterKeySlot(ctx, "reshard:{n0}").Result()
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"n0"}
	for i := 1; len(names) < 8; i++ {
		n := "n" + strconv.Itoa(i)
		if s, err := c.ClusterKeySlot(ctx, "reshard:{"+n+"}").Result(); err != nil {
			t.Fatal(err)
		} else if s == slot {
			names = append(names, n)
		}
	}
	var ok, failed atomic.Int64
	var last sync.Map // name → last token
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, name := range names {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					lease, err := l.AcquireWait(cctx, name, time.Second)
					if err != nil {
						cancel()
						failed.Add(1)
						t.Logf("acquire %s: %v", name, err)
						continue
					}
					if prev, loaded := last.Swap(name, lease.Token); loaded && prev.(int64) >= lease.Token {
						t.Errorf("token %d after %d on %s", lease.Token, prev, name)
					}
					if _, err := l.Release(cctx, lease); err != nil {
						failed.Add(1)
						t.Logf("release %s: %v", name, err)
					} else {
						ok.Add(1)
					}
					cancel()
				}
			}()
		}
	}
	const moves = 8
	for range moves {
		cl.MoveSlot(t, "reshard:{n0}", time.Millisecond)
	}
	close(stop)
	wg.Wait()
	t.Logf("%d migrations of slot %d: %d acquire+release pairs, %d failed calls", moves, slot, ok.Load(), failed.Load())
	if ok.Load() == 0 {
		t.Fatal("no lock was taken during the migrations")
	}
	if failed.Load() != 0 {
		t.Fatalf("%d calls failed while their slot migrated", failed.Load())
	}
}
