package redistest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// KillClients kills every client connection of s but its own (CLIENT KILL
// TYPE normal SKIPME yes) every interval, from a client of its own, until
// the returned stop is called; stop returns how many connections it
// killed. Clients reconnect on their next command: what the kills show is
// what a client does with a call whose connection died under it.
func (s *Server) KillClients(t testing.TB, every time.Duration) (stop func() int64) {
	t.Helper()
	admin := s.Client(t, func(o *redis.Options) { o.PoolSize = 1 })
	var kills atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(every):
			}
			if n, err := admin.ClientKillByFilter(context.Background(), "TYPE", "normal", "SKIPME", "yes").Result(); err == nil {
				kills.Add(n)
			}
		}
	}()
	var once sync.Once
	stop = func() int64 {
		once.Do(func() { close(done); wg.Wait() })
		return kills.Load()
	}
	t.Cleanup(func() { stop() })
	return stop
}
