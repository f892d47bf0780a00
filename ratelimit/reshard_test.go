package ratelimit_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// Redis Cluster moves a slot's keys to another node one at a time, so for
// a moment a Policy's states sit on two nodes and its script is refused
// with TRYAGAIN: it did not run, and the decision reached the caller as an
// error. Moving the slot in use back and forth while Policies are decided
// on it, batched and not, no call may fail, and the server must count
// exactly what callers were told was admitted.
func TestPolicyDecisionsDoNotFailWhileTheirSlotMigrates(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Redis Cluster")
	}
	cl := redistest.StartCluster(t)
	c := cl.Client(t)
	ctx := context.Background()
	// User keys whose states share one slot, so that every migration moves them.
	slot, err := c.ClusterKeySlot(ctx, "{u0}").Result()
	if err != nil {
		t.Fatal(err)
	}
	users := []string{"u0"}
	for i := 1; len(users) < 8; i++ {
		u := "u" + strconv.Itoa(i)
		if s, err := c.ClusterKeySlot(ctx, "{"+u+"}").Result(); err != nil {
			t.Fatal(err)
		} else if s == slot {
			users = append(users, u)
		}
	}
	log := ratelimit.SlidingLog(1_000_000, time.Hour) // its members count what was admitted
	p := ratelimit.Policy{ratelimit.GCRA(1_000_000, time.Second, 1_000_000), log}
	for name, batch := range map[string]int{"unbatched": 0, "batched": 16} {
		opts := []ratelimit.Option{ratelimit.WithPrefix("rs" + name + ":")}
		if batch > 0 {
			opts = append(opts, ratelimit.WithBatching(batch))
		}
		l, err := ratelimit.New(c, opts...)
		if err != nil {
			t.Fatal(err)
		}
		var admitted, failed atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					res, err := l.Allow(cctx, users[i%len(users)], p)
					cancel()
					switch {
					case err != nil:
						failed.Add(1)
						t.Logf("%s: %v", name, err)
					case res.Allowed:
						admitted.Add(1)
					}
				}
			}()
		}
		const moves = 6
		for range moves {
			cl.MoveSlot(t, "{u0}", time.Millisecond)
		}
		close(stop)
		wg.Wait()
		counted := int64(0)
		for _, u := range users {
			n, err := c.ZCard(ctx, "rs"+name+":{"+u+"}:l1000000:1h").Result()
			if err != nil {
				t.Fatal(err)
			}
			counted += n
		}
		t.Logf("%s: %d migrations of slot %d: %d admitted, %d failed, the server counted %d", name, moves, slot, admitted.Load(), failed.Load(), counted)
		if admitted.Load() == 0 {
			t.Fatalf("%s: nothing was decided during the migrations", name)
		}
		if failed.Load() != 0 || counted != admitted.Load() {
			t.Fatalf("%s: %d calls failed while their slot migrated; %d admitted, %d counted", name, failed.Load(), admitted.Load(), counted)
		}
	}
}
