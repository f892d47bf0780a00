package semaphore_test

import (
	"context"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
)

// subscribers returns how many connections subscribe to name's release
// channel (layout in the package doc).
func subscribers(t testing.TB, c *redis.Client, s *redistest.Server, name string) int64 {
	t.Helper()
	ch := permitsKey(s, name) + ":released"
	m, err := c.PubSubNumSub(context.Background(), ch).Result()
	if err != nil {
		t.Fatal(err)
	}
	return m[ch]
}

// marked reports whether a waiter has marked name, as it does on each
// refused attempt once subscribed.
func marked(t testing.TB, c *redis.Client, s *redistest.Server, name string) bool {
	t.Helper()
	n, err := c.Exists(context.Background(), permitsKey(s, name)+":waiting").Result()
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

var publishCalls = regexp.MustCompile(`cmdstat_publish:calls=(\d+)`)

// published returns how many PUBLISH the server has run, scripts' included.
func published(t testing.TB, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := publishCalls.FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

type waited struct {
	p    *semaphore.Permit
	err  error
	woke time.Time
}

// startWaiter runs AcquireWait in a goroutine and returns once it has
// subscribed and marked the semaphore: asleep until something wakes it.
func startWaiter(t *testing.T, i *semaphore.Issuer, raw *redis.Client, s *redistest.Server, name string, capacity int) <-chan waited {
	t.Helper()
	out := make(chan waited, 1)
	go func() {
		p, err := i.AcquireWait(context.Background(), name, capacity, 10*time.Second)
		out <- waited{p, err, time.Now()}
	}()
	waitFor(t, 5*time.Second, "the waiter subscribed and marked the semaphore", func() bool {
		return subscribers(t, raw, s, name) == 1 && marked(t, raw, s, name)
	})
	return out
}

// subscribeVia is a Client whose subscriptions go through another client
// (one through a Relay, which can be stalled) and everything else direct.
type subscribeVia struct {
	semaphore.Client
	sub semaphore.Client
}

func (c subscribeVia) Subscribe(ctx context.Context, channel string) (<-chan struct{}, func()) {
	return c.sub.Subscribe(ctx, channel)
}

// A release notification can be lost: the mark it depends on gone (here
// deleted, as an eviction or a failover would), so nothing is published, or
// the subscriber's connection stalled, so what is published never arrives.
// The waiter then wakes by its fallback re-check, within the backoff's
// maximum, not at the holder's expiry 30s away.
func TestAcquireWaitNeverHangsWhenTheReleaseNotificationIsLost(t *testing.T) {
	const backoffMax = 200 * time.Millisecond
	for _, tc := range []struct {
		name string
		lose func(t *testing.T, raw *redis.Client, s *redistest.Server, relay *redistest.Relay)
	}{
		{"mark deleted, nothing published", func(t *testing.T, raw *redis.Client, s *redistest.Server, _ *redistest.Relay) {
			if err := raw.Del(context.Background(), permitsKey(s, "job")+":waiting").Err(); err != nil {
				t.Fatal(err)
			}
		}},
		{"published into a stalled subscription", func(_ *testing.T, _ *redis.Client, _ *redistest.Server, relay *redistest.Relay) {
			relay.Stall()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := redistest.Start(t, redistest.Own()) // commandstats count this test only
			raw := s.Client(t)
			relay := redistest.StartRelay(t, s.Addr())
			via := s.Client(t, func(o *redis.Options) { o.Addr = relay.Addr() })
			holder := newIssuer(t, s)
			calls := goredisadapter.New(s.Client(t))
			waiter := newIssuerOn(t, s, subscribeVia{Client: calls, sub: goredisadapter.New(via)}, semaphore.WithWaitBackoff(backoffMax/4, backoffMax))
			p := mustAcquire(t, holder, "job", 1, 30*time.Second)
			w := startWaiter(t, waiter, raw, s, "job", 1)
			before := published(t, raw)
			tc.lose(t, raw, s, relay)
			sent := time.Now()
			mustRelease(t, holder, p)
			got := <-w
			relay.Resume()
			if got.err != nil {
				t.Fatal(got.err)
			}
			late := got.woke.Sub(sent)
			t.Logf("release published %d times, heard by nobody: waiter held a permit %v after the release (backoff max %v, holder's TTL 30s)",
				published(t, raw)-before, late, backoffMax)
			if late > backoffMax+250*time.Millisecond {
				t.Fatalf("waiter woke %v after a lost notification, want within the backoff max %v", late, backoffMax)
			}
			mustRelease(t, waiter, got.p)
		})
	}
}

// Waiters behind a full semaphore each get a permit as holders release, and
// never more than capacity hold at once.
func TestWaitersBehindAFullSemaphoreAreServedCapacityAtATime(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s)
	const waiters, capacity = 12, 3
	var (
		mu      sync.Mutex
		holding int
		most    int
		wg      sync.WaitGroup
	)
	for range waiters {
		wg.Go(func() {
			p, err := i.AcquireWait(context.Background(), "job", capacity, 5*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			holding++
			most = max(most, holding)
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			mu.Lock()
			holding--
			mu.Unlock()
			if ok, err := i.Release(context.Background(), p); err != nil || !ok {
				t.Errorf("release: %v, %v", ok, err)
			}
		})
	}
	wg.Wait()
	t.Logf("%d waiters, capacity %d: at most %d held at once (as this process saw it)", waiters, capacity, most)
	if most > capacity || most < 2 {
		t.Fatalf("at most %d at once, want 2..%d", most, capacity)
	}
}
