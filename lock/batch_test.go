package lock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// Batched, 500 goroutines contend for 20 names: a batch carries acquires
// and releases of one name side by side, so a batcher that reordered a
// name's calls, or answered one call with another's reply, would let two
// goroutines hold a name at once or hand out a token twice.
func TestBatchedAcquiresOf500GoroutinesNeverDoubleHold(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s, func(o *redis.Options) { o.PoolSize = 8 })
	sizes := &redistest.PipelineCount{}
	c.AddHook(sizes)
	l := newLockerOn(t, s, c, lock.WithBatching(64))

	const goroutines, names, attempts = 500, 20, 30
	var (
		holders   [names]atomic.Int32
		mu        sync.Mutex
		lastToken [names]int64
		acquired  atomic.Int64
		failures  = make(chan error, goroutines)
	)
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range attempts {
				n := (g + i) % names
				name := fmt.Sprintf("account-%d", n)
				lease, err := l.Acquire(ctx, name, 10*time.Second)
				if errors.Is(err, lock.ErrHeld) {
					continue
				} else if err != nil {
					failures <- err
					return
				}
				acquired.Add(1)
				if h := holders[n].Add(1); h != 1 {
					failures <- fmt.Errorf("%s held by %d goroutines at once", name, h)
				}
				mu.Lock()
				if lease.Token <= lastToken[n] {
					failures <- fmt.Errorf("%s: token %d after %d", name, lease.Token, lastToken[n])
				}
				lastToken[n] = lease.Token
				mu.Unlock()
				holders[n].Add(-1)
				if ok, err := l.Release(ctx, lease); err != nil || !ok {
					failures <- fmt.Errorf("%s: release of a live lease: %v, %v", name, ok, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Error(err)
	}
	p, cmds := sizes.Pipelines.Load(), sizes.Cmds.Load()
	t.Logf("%d goroutines × %d attempts on %d names: %d acquired; %d script calls in %d pipelines (%.1f a pipeline)",
		goroutines, attempts, names, acquired.Load(), cmds, p, float64(cmds)/float64(max(p, 1)))
	if acquired.Load() < names {
		t.Fatalf("%d acquisitions, want at least one per name", acquired.Load())
	}
	// 500 goroutines on 8 connections: calls that are not batched would
	// be one a pipeline.
	if float64(cmds) < 4*float64(p) {
		t.Fatalf("%d calls in %d pipelines: the calls were not batched", cmds, p)
	}
}

func TestWithBatchingRefusesASizeBelowOne(t *testing.T) {
	s := redistest.Start(t)
	for _, size := range []int{0, -1} {
		if _, err := lock.New(goredisadapter.New(client(t, s)), lock.WithBatching(size)); !errors.Is(err, lock.ErrInvalidOption) {
			t.Errorf("WithBatching(%d): %v, want ErrInvalidOption", size, err)
		}
	}
}
