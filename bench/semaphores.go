package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest/naivesemaphore"
	"github.com/redis-primitives/go/semaphore"
)

// semaphoreCapacity is the capacity of every semaphore of the pairs table:
// a semaphore of capacity 1 is a lock, so the lock's row beside it shows
// what counting N holders costs over excluding all but one.
const semaphoreCapacity = 5

// semaphoreCases builds the semaphore table: acquire+release on cfg.Keys
// names (one block of names per goroutine, so no attempt is refused), by
// ours, the lock and the naive INCR/DECR semaphore.
func (r *runner) semaphoreCases(_ context.Context) (*benchCase, error) {
	c := &benchCase{id: TableSemaphoreMany,
		title: fmt.Sprintf("Semaphores, %d names of capacity %d (uncontended): acquire+release pairs", r.cfg.Keys, semaphoreCapacity),
		unit:  "pairs/s", okUnit: "acquired/s", ref: NameOursSemaphore}
	sem, err := semaphore.New(goredisadapter.New(r.client()), semaphore.WithPrefix(r.cfg.Prefix+"sem:ours:"))
	if err != nil {
		return nil, err
	}
	lk, err := oursLocker(r.client(), r.cfg.Prefix+"sem:lock:")
	if err != nil {
		return nil, err
	}
	naive := naivesemaphore.New(r.client(), r.cfg.Prefix+"sem:naive:")
	impls := []struct {
		name, note string
		pair       func(ctx context.Context, name string) (bool, error)
	}{
		{NameOursSemaphore, "Acquire (fencing token, capacity 5) + Release", func(ctx context.Context, name string) (bool, error) {
			p, err := sem.Acquire(ctx, name, semaphoreCapacity, lockTTL)
			if errors.Is(err, semaphore.ErrFull) {
				return false, nil
			} else if err != nil {
				return false, err
			}
			ok, err := sem.Release(ctx, p)
			if err == nil && !ok {
				err = fmt.Errorf("bench: semaphore %q: release of a live permit reported it lost", name)
			}
			return ok, err
		}},
		{NameOursLock, "the lock on the same names: a semaphore of capacity 1", lk},
		{NameNaiveSemaphore, "INCR (DECR back when over capacity) + DECR: no lease, no token; leaks a crashed holder's place", func(ctx context.Context, name string) (bool, error) {
			ok, err := naive.Acquire(ctx, name, semaphoreCapacity)
			if err != nil || !ok {
				return ok, err
			}
			return true, naive.Release(ctx, name)
		}},
	}
	names := make([]string, r.cfg.Keys)
	for i := range names {
		names[i] = "k" + strconv.Itoa(i)
	}
	g := r.cfg.Goroutines
	for n, im := range impls {
		c.contenders = append(c.contenders, contender{name: im.name, note: im.note, ref: n == 0,
			run: func(ctx context.Context, d time.Duration) (sample, error) {
				return measure(ctx, g, d, func(ctx context.Context, g, i int) (bool, error) {
					ok, err := im.pair(ctx, names[keyOf(g, i, r.cfg.Goroutines, len(names))])
					if err == nil && !ok {
						err = fmt.Errorf("bench: %s refused a place no one else uses", im.name)
					}
					return ok, err
				})
			}})
	}
	return c, nil
}

// SemaphoreMemory is what live permits of one semaphore keep in Redis.
type SemaphoreMemory struct {
	// Permits is how many permits were live, on one semaphore of that
	// capacity.
	Permits int `json:"permits"`
	// UsagePerPermit is MEMORY USAGE (SAMPLES 0) of the permits' sorted set
	// and the holders' hash, divided by Permits; the counter, one small
	// string per semaphore, is left out.
	UsagePerPermit float64 `json:"memory_usage_bytes_per_permit"`
	// Counter is MEMORY USAGE of the semaphore's token counter.
	Counter int64 `json:"counter_bytes"`
}

// semaphoreMemory fills one semaphore per size with that many live permits
// and measures them: 100 stay within Redis' listpack encodings (128
// entries), 1,000 do not.
func (r *runner) semaphoreMemory(ctx context.Context) ([]SemaphoreMemory, error) {
	c := r.client()
	sem, err := semaphore.New(goredisadapter.New(c), semaphore.WithPrefix(r.cfg.Prefix+"semmem:"))
	if err != nil {
		return nil, err
	}
	var out []SemaphoreMemory
	for _, n := range []int{100, 1000} {
		name := "s" + strconv.Itoa(n)
		for range n {
			if _, err := sem.Acquire(ctx, name, n, time.Hour); err != nil {
				return nil, fmt.Errorf("bench: semaphore memory: %w", err)
			}
		}
		base := r.cfg.Prefix + "semmem:{" + name + "}"
		var sum int64
		for _, k := range []string{base, base + ":holders"} {
			u, err := c.MemoryUsage(ctx, k, 0).Result()
			if err != nil {
				return nil, fmt.Errorf("bench: MEMORY USAGE %s: %w", k, err)
			}
			sum += u
		}
		counter, err := c.MemoryUsage(ctx, base+":token", 0).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("bench: MEMORY USAGE: %w", err)
		}
		out = append(out, SemaphoreMemory{Permits: n, UsagePerPermit: float64(sum) / float64(n), Counter: counter})
	}
	return out, nil
}
