package semaphore_test

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
	"github.com/redis-primitives/go/semaphore"
)

// go-redis sends a command again when the connection fails before the
// reply is read (MaxRetries defaults to 3). An acquire may then run twice:
// it finds its own permit by id and answers it, so it never takes a second
// place nor reports its own semaphore full. A release is not sent again
// (it would answer "not held" after releasing) and says ErrReplyLost. With
// the client's default options and connections killed under load, on
// semaphores of capacity 1 nobody else uses, a call reports what it did or
// returns an error.
func TestAcquireAndReleaseReportWhatTheyDidWhenGoRedisResendsThemAfterAKilledConnection(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c := s.Client(t, func(o *redis.Options) { o.PoolSize = 64 })
	i := newIssuerOn(t, s, c)
	ctx := context.Background()
	var acquired, released, selfFull, notHeld, replyLost, errs atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 24 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				// A semaphore of its own, never used before: ErrFull can only
				// be this very acquire, counted twice.
				p, err := i.Acquire(ctx, "g"+strconv.Itoa(g)+"-"+strconv.Itoa(n), 1, 2*time.Second)
				switch {
				case errors.Is(err, semaphore.ErrFull):
					selfFull.Add(1)
					continue
				case err != nil:
					errs.Add(1)
					continue
				}
				acquired.Add(1)
				ok, err := i.Release(ctx, p)
				switch {
				case errors.Is(err, semaphore.ErrReplyLost):
					replyLost.Add(1)
				case err != nil:
					errs.Add(1)
				case ok:
					released.Add(1)
				default:
					notHeld.Add(1)
				}
			}
		})
	}
	kill := s.KillClients(t, 3*time.Millisecond)
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()
	killed := kill()
	t.Logf("%d connections killed: %d acquired, %d released, %d releases lost their reply (not resent), %d other errors; %d acquires found their own semaphore full, %d releases answered not held",
		killed, acquired.Load(), released.Load(), replyLost.Load(), errs.Load(), selfFull.Load(), notHeld.Load())
	if killed == 0 || acquired.Load() == 0 {
		t.Fatal("no connection was killed under load: the test proves nothing")
	}
	if selfFull.Load() != 0 || notHeld.Load() != 0 {
		t.Fatalf("%d acquires found their own semaphore full and %d releases found their own permit gone: calls that ran twice",
			selfFull.Load(), notHeld.Load())
	}
}
