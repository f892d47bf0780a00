package fence_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// Batched, 300 goroutines write 10 keys with random tokens: each accepted
// write appends its token to a log in the same script, so the log is the
// order the server applied them in. A batch that mixed up replies, or a
// fence that let a lower token through a batch, shows as a log that goes
// down or a verdict that disagrees with it.
func TestBatchedFencedWritesOf300GoroutinesNeverLetALowerTokenThrough(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t, func(o *redis.Options) { o.PoolSize = 8 })
	sizes := &redistest.PipelineCount{}
	c.AddHook(sizes)
	store, err := fence.New(goredisadapter.New(c), fence.WithBatching(64))
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, keys, writes = 300, 10, 20
	ctx := context.Background()
	var accepted, refused atomic.Int64
	failures := make(chan error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for i := range writes {
				key := s.Prefix() + "{k" + strconv.Itoa((g+i)%keys) + "}"
				token := rng.Int64N(10_000) + 1
				_, err := store.Eval(ctx, token, `redis.call('RPUSH', KEYS[2], ARGV[2]); return 1`, []string{key + ":log"}, token)
				var stale *fence.StaleError
				switch {
				case err == nil:
					accepted.Add(1)
				case errors.As(err, &stale):
					if stale.Highest <= token {
						failures <- fmt.Errorf("token %d refused with highest %d", token, stale.Highest)
					}
					refused.Add(1)
				default:
					failures <- err
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
	logged := int64(0)
	for k := range keys {
		key := s.Prefix() + "{k" + strconv.Itoa(k) + "}"
		log, err := c.LRange(ctx, key+":log", 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		logged += int64(len(log))
		last := int64(0)
		for _, v := range log {
			tok, _ := strconv.ParseInt(v, 10, 64)
			if tok < last {
				t.Fatalf("%s: token %d applied after %d", key, tok, last)
			}
			last = tok
		}
		if hi, err := store.Highest(ctx, key+":log"); err != nil || hi != last {
			t.Fatalf("%s: highest %d, %v; the log ends at %d", key, hi, err, last)
		}
	}
	p, cmds := sizes.Pipelines.Load(), sizes.Cmds.Load()
	t.Logf("%d writes: %d accepted, %d refused; %d script calls in %d pipelines (%.1f a pipeline)",
		goroutines*writes, accepted.Load(), refused.Load(), cmds, p, float64(cmds)/float64(max(p, 1)))
	if logged != accepted.Load() {
		t.Fatalf("%d writes logged, %d reported accepted", logged, accepted.Load())
	}
	if float64(cmds) < 4*float64(p) {
		t.Fatalf("%d calls in %d pipelines: the writes were not batched", cmds, p)
	}
}

func TestWithBatchingRefusesASizeBelowOne(t *testing.T) {
	s := redistest.Start(t)
	client := goredisadapter.New(s.Client(t))
	for _, size := range []int{0, -1} {
		if _, err := fence.New(client, fence.WithBatching(size)); !errors.Is(err, fence.ErrInvalidOption) {
			t.Errorf("WithBatching(%d): %v, want ErrInvalidOption", size, err)
		}
	}
}
