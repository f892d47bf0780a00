package lock_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// go-redis sends a command again, and a pipeline again, when the
// connection fails before the reply is read (MaxRetries defaults to 3). A
// release that ran and was sent again answered "not held" after it had
// released. An acquire may run twice (it finds its own value and answers
// its token), and must then report the lock acquired, not held by someone.
// With the client's default options and connections killed under load, on
// names nobody else takes, a call either reports what it did or returns an
// error.
func TestAcquireAndReleaseReportWhatTheyDidWhenGoRedisResendsThemAfterAKilledConnection(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c := s.Client(t, func(o *redis.Options) { o.PoolSize = 64 })
	l, err := lock.New(c, lock.WithPrefix(s.Prefix()+"lock:"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var acquired, released, selfHeld, notHeld, errs atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// A name of its own, never taken before: ErrHeld can only be
				// this very acquire, run twice.
				lease, err := l.Acquire(ctx, "g"+strconv.Itoa(g)+"-"+strconv.Itoa(i), 2*time.Second)
				switch {
				case errors.Is(err, lock.ErrHeld):
					selfHeld.Add(1)
					continue
				case err != nil:
					errs.Add(1)
					continue
				}
				acquired.Add(1)
				ok, err := l.Release(ctx, lease)
				switch {
				case err != nil:
					errs.Add(1)
				case ok:
					released.Add(1)
				default:
					notHeld.Add(1)
				}
			}
		}()
	}
	kill := s.KillClients(t, 3*time.Millisecond)
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()
	killed := kill()
	t.Logf("%d connections killed: %d acquired, %d released, %d errors; %d acquires answered held by themselves, %d releases answered not held",
		killed, acquired.Load(), released.Load(), errs.Load(), selfHeld.Load(), notHeld.Load())
	if killed == 0 || acquired.Load() == 0 {
		t.Fatal("no connection was killed under load: the test proves nothing")
	}
	if selfHeld.Load() != 0 || notHeld.Load() != 0 {
		t.Fatalf("%d acquires found their own lock held and %d releases found their own lock gone: calls that ran twice",
			selfHeld.Load(), notHeld.Load())
	}
}
