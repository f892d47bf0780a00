package fence_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/internal/redistest"
)

// go-redis sends a command again, and a pipeline again, when the
// connection fails before the reply is read (MaxRetries defaults to 3). A
// fenced write that had landed then landed twice: an Eval that counts
// counted twice. With the client's default options and connections killed
// under load, what the server counted lies between the writes reported
// accepted and those plus the writes that returned an error.
func TestFencedWriteLandsOnceWhenGoRedisResendsItAfterAKilledConnection(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c := s.Client(t, func(o *redis.Options) { o.PoolSize = 64 })
	store, err := fence.New(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const keys = 8
	key := func(i int) string { return s.Prefix() + "count:" + strconv.Itoa(i%keys) }
	const incr = "return redis.call('INCR', KEYS[2])"
	var accepted, errs atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; ; i += 24 {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := store.Eval(ctx, 1, incr, []string{key(i)}); err != nil {
					errs.Add(1)
				} else {
					accepted.Add(1)
				}
			}
		}()
	}
	kill := s.KillClients(t, 3*time.Millisecond)
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()
	killed := kill()
	// A deadline, so that the first read after the kills is sent again on a
	// new connection by a client that resends only within one (rueidis,
	// through its adapter), as go-redis resends it.
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	counted := int64(0)
	for i := range keys {
		n, err := c.Get(rctx, key(i)).Int64()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		counted += n
	}
	a, e := accepted.Load(), errs.Load()
	t.Logf("%d connections killed; %d writes accepted, %d errors; the server counted %d", killed, a, e, counted)
	if killed == 0 || a == 0 {
		t.Fatal("no connection was killed under load: the test proves nothing")
	}
	if counted < a || counted > a+e {
		t.Fatalf("the server counted %d writes, outside [%d accepted, %d accepted + errors]: some landed twice", counted, a, a+e)
	}
}
