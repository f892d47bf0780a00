package ratelimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// go-redis sends a command again, and a whole pipeline again, when the
// connection fails before the reply is read (MaxRetries defaults to 3).
// A script that ran before the connection dropped then runs twice, and a
// caller told "admitted once" has been charged twice. With the client's
// default options and connections killed under load, what the server
// counted must lie between what callers were told was admitted and that
// plus the calls that returned an error (each of those may or may not
// have been decided).
func TestEveryCallIsCountedOnceWhenGoRedisResendsItAfterAKilledConnection(t *testing.T) {
	for name, batch := range map[string]int{"unbatched": 0, "batched": 64} {
		t.Run(name, func(t *testing.T) {
			s := redistest.Start(t, redistest.Own())
			opts := []ratelimit.Option{}
			if batch > 0 {
				opts = append(opts, ratelimit.WithBatching(batch))
			}
			c, l := limiter(t, s, opts...)
			lim := ratelimit.SlidingLog(1_000_000, time.Hour) // never rejects here
			const keys, callers = 16, 32
			key := func(i int) string { return "k" + string(rune('a'+i%keys)) }
			ctx := context.Background()
			if _, err := l.Allow(ctx, key(0), lim); err != nil { // loads the script
				t.Fatal(err)
			}
			var admitted, errs atomic.Int64
			admitted.Add(1)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for g := range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := g; ; i += callers {
						select {
						case <-stop:
							return
						default:
						}
						res, err := l.Allow(ctx, key(i), lim)
						switch {
						case err != nil:
							errs.Add(1)
						case res.Allowed:
							admitted.Add(1)
						}
					}
				}()
			}
			kill := s.KillClients(t, 3*time.Millisecond)
			time.Sleep(1500 * time.Millisecond)
			close(stop)
			wg.Wait()
			killed := kill()

			// A deadline, so that the first read after the kills is sent again
			// on a new connection by a client that resends only within one
			// (rueidis, through its adapter), as go-redis resends it.
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			counted := int64(0)
			for i := range keys {
				n, err := c.ZCard(rctx, s.Prefix()+"rl:{"+key(i)+"}:l1000000:1h").Result()
				if err != nil {
					t.Fatal(err)
				}
				counted += n
			}
			a, e := admitted.Load(), errs.Load()
			t.Logf("%s: %d connections killed; callers told %d admitted and %d errors; the server counted %d",
				name, killed, a, e, counted)
			if killed == 0 || a == 0 {
				t.Fatal("no connection was killed under load: the test proves nothing")
			}
			if counted < a {
				t.Fatalf("the server counted %d, fewer than the %d callers were told were admitted", counted, a)
			}
			if counted > a+e {
				t.Fatalf("the server counted %d: %d more than the %d admitted and %d errors; some calls were charged twice",
					counted, counted-a-e, a, e)
			}
		})
	}
}
