package clienttest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
	"github.com/redis-primitives/go/semaphore/httpsem"
)

// The tests of package semaphore (and its middleware, httpsem) whose
// outcome depends on the client: killed connections, a frozen server, a
// Cluster, wake-ups by a release, a Sentinel failover. Their names carry
// "Semaphore" after "Test": lock's and httprate's tests of the same names
// share this package.

// A client sends a command again when the connection fails before the
// reply is read (go-redis's MaxRetries defaults to 3). An acquire may then
// run twice: it finds its own permit by id and answers it, so it never
// takes a second place nor reports its own semaphore full. A release is
// not sent again (it would answer "not held" after releasing) and says
// ErrReplyLost. With the client's default options and connections killed
// under load, on semaphores of capacity 1 nobody else uses, a call reports
// what it did or returns an error.
func TestSemaphoreAcquireAndReleaseReportWhatTheyDidWhenTheClientResendsThemAfterAKilledConnection(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		s := redistest.Start(t, redistest.Own())
		i := newSemIssuer(t, k.server(t, s), s)
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
	})
}

// An Acquire sent to a frozen server times out, and the script still runs
// when the server wakes: it takes a permit. The Issuer gives that permit
// back by its own id once the server answers, long before its TTL, and
// leaves the other holder's permit alone.
func TestSemaphoreAcquireThatTimedOutOnAFrozenServerIsGivenBackOnceTheServerWakes(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		s := redistest.Start(t, redistest.Own())
		i := newSemIssuer(t, k.server(t, s), s)
		const ttl = 5 * time.Second
		other := mustSemAcquire(t, i, "job", 2, ttl) // also loads the script, as on a server in use
		s.Freeze(t)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err := i.Acquire(ctx, "job", 2, ttl)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("acquire on a frozen server: %v, want its deadline", err)
		}
		s.Thaw(t)
		thawed := time.Now()
		c := s.Client(t)
		// The counter moves only when a permit is granted: the lost acquire ran.
		semWaitFor(t, ttl, "the timed-out acquire ran once the server woke", func() bool {
			v, err := c.Get(context.Background(), semPermitsKey(s, "job")+":token").Int64()
			return err == nil && v > other.Token
		})
		semWaitFor(t, ttl, "the orphaned permit was given back", func() bool {
			h := semHolders(t, i, "job")
			return len(h) == 1 && h[0].ID == other.ID
		})
		back := time.Since(thawed)
		t.Logf("a timed-out acquire's permit was given back %v after the thaw (ttl %v); the other holder's permit is untouched", back, ttl)
		if back > time.Second {
			t.Fatalf("given back %v after the thaw, want well within the TTL %v", back, ttl)
		}
		if err := i.Extend(context.Background(), other, ttl); err != nil {
			t.Fatalf("the other holder's permit: %v", err)
		}
	})
}

// On a Cluster of three primaries every script of a semaphore touches one
// slot (its keys share the hash tag {name}), so nothing is refused with
// CROSSSLOT, and names spread over all three primaries work the same:
// capacity held, a waiter woken by a release, Holders, Extend.
func TestSemaphoreEveryOperationRunsOnAClusterOfThreePrimaries(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t)
		c := cl.Client(t)
		i, err := semaphore.New(k.cluster(t, cl), semaphore.WithPrefix("semaphore:"))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		primaries := map[string]bool{}
		for n := 0; len(primaries) < 3 && n < 64; n++ {
			name := fmt.Sprintf("tenant-%d", n)
			primaries[cl.PrimaryOf(t, "semaphore:{"+name+"}").Addr()] = true
			a, err := i.Acquire(ctx, name, 2, 10*time.Second)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			b, err := i.Acquire(ctx, name, 2, 10*time.Second)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if _, err := i.Acquire(ctx, name, 2, time.Second); !errors.Is(err, semaphore.ErrFull) {
				t.Fatalf("%s: third acquire on capacity 2: %v, want ErrFull", name, err)
			}
			if err := i.Extend(ctx, a, 10*time.Second); err != nil {
				t.Fatalf("%s: extend: %v", name, err)
			}
			if h, err := i.Holders(ctx, name); err != nil || len(h) != 2 {
				t.Fatalf("%s: holders %v, %v; want 2", name, h, err)
			}
			woke := make(chan error, 1)
			go func() {
				p, err := i.AcquireWait(ctx, name, 2, time.Second)
				if err == nil && p.Token <= b.Token {
					err = fmt.Errorf("waiter's token %d, not above %d", p.Token, b.Token)
				}
				woke <- err
			}()
			semWaitFor(t, 5*time.Second, name+": the waiter subscribed and marked the semaphore", func() bool {
				return c.Exists(ctx, "semaphore:{"+name+"}:waiting").Val() == 1
			})
			if ok, err := i.Release(ctx, a); err != nil || !ok {
				t.Fatalf("%s: release: %v, %v", name, ok, err)
			}
			if err := <-woke; err != nil {
				t.Fatalf("%s: waiter: %v", name, err)
			}
		}
		t.Logf("semaphores on %d primaries", len(primaries))
		if len(primaries) != 3 {
			t.Fatalf("names reached %d primaries, want 3", len(primaries))
		}
	})
}

// Both replicas are frozen and cut off, so they miss every permit the
// primary grants next; the primary is then killed and Sentinel promotes
// one of them. The promoted replica has no record of those permits (it
// grants the full capacity again) nor of their tokens, and still every
// token it grants is above every token granted before: they follow the
// server's clock. The client follows the failover to the new primary.
func TestSemaphoreTokensNeverGoBackAcrossASentinelFailoverToALaggingReplica(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		sen := redistest.StartSentinel(t)
		ctx := context.Background()
		primary := sen.Primary(t)
		var replicas []*redistest.Server
		for _, s := range sen.Servers() {
			if s != primary {
				replicas = append(replicas, s)
			}
		}
		pc := primary.Client(t)
		for _, r := range replicas {
			r.Freeze(t)
		}
		if err := pc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
			t.Fatal(err)
		}
		semWaitFor(t, 10*redistest.SentinelDownAfter, "no replica online on the primary", func() bool {
			info, err := pc.Info(ctx, "replication").Result()
			return err == nil && strings.Contains(info, "connected_slaves:0")
		})

		const capacity = 3
		i := newSemIssuer(t, k.failover(t, sen), primary)
		var before []*semaphore.Permit
		for range capacity {
			before = append(before, mustSemAcquire(t, i, "pool", capacity, time.Minute))
		}
		highest := before[capacity-1].Token

		fo := sen.KillPrimaryThawing(t, replicas...)
		var after []*semaphore.Permit
		semWaitFor(t, 10*redistest.SentinelDownAfter, "the failover client reaches the new primary", func() bool {
			p, err := i.Acquire(ctx, "pool", capacity, time.Minute)
			if err == nil {
				after = append(after, p)
			} else if errors.Is(err, semaphore.ErrFull) {
				t.Fatalf("the promoted replica has the old permits: %v; it was meant to miss them", err)
			}
			return len(after) == capacity
		})
		t.Logf("Sentinel promoted %s in %v: highest token before %d, first after %d (+%d µs); %d permits granted again while the %d old ones live on",
			fo.New.Addr(), fo.Took.Round(time.Millisecond), highest, after[0].Token, after[0].Token-highest, len(after), len(before))
		for n, p := range after {
			if p.Token <= highest {
				t.Fatalf("token %d after the failover (%d of %d), not above %d", p.Token, n+1, capacity, highest)
			}
		}
		if _, err := i.Acquire(ctx, "pool", capacity, time.Minute); !errors.Is(err, semaphore.ErrFull) {
			t.Fatal(fmt.Errorf("acquire past the capacity after the failover: %w", err))
		}
	})
}

func TestSemaphoreAcquireWaitWakesWithinMillisecondsOfARelease(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		s := redistest.Start(t)
		raw := s.Client(t)
		holder := newSemIssuer(t, k.server(t, s), s)
		// A fallback this slow cannot be what wakes the waiter, and the holders'
		// 30s permits are nowhere near expiry: only the notification can.
		waiter := newSemIssuer(t, k.server(t, s), s, semaphore.WithWaitBackoff(10*time.Second, 10*time.Second))
		const rounds, capacity = 20, 2
		var latencies []time.Duration
		for round := range rounds {
			a := mustSemAcquire(t, holder, "job", capacity, 30*time.Second)
			b := mustSemAcquire(t, holder, "job", capacity, 30*time.Second)
			w := startSemWaiter(t, waiter, raw, s, "job", capacity)
			sent := time.Now()
			mustSemRelease(t, holder, a)
			got := <-w
			if got.err != nil {
				t.Fatalf("round %d: AcquireWait: %v", round, got.err)
			}
			if got.p.Token <= b.Token {
				t.Fatalf("round %d: waiter's token %d, want above %d", round, got.p.Token, b.Token)
			}
			latencies = append(latencies, got.woke.Sub(sent))
			mustSemRelease(t, waiter, got.p)
			mustSemRelease(t, holder, b)
			semWaitFor(t, 2*time.Second, "the waiter's subscription ended", func() bool { return semSubscribers(t, raw, s, "job") == 0 })
		}
		slices.Sort(latencies)
		median, worst := latencies[rounds/2], latencies[rounds-1]
		t.Logf("release sent -> waiter holds a permit, %d rounds: min %v, median %v, max %v (fallback 10s)", rounds, latencies[0], median, worst)
		// Loopback on two busy cores with -race: a few milliseconds.
		if median > 20*time.Millisecond || worst > 250*time.Millisecond {
			t.Fatalf("wake-up median %v, max %v: want a few milliseconds", median, worst)
		}
	})
}

func TestSemaphoreAcquireWaitEndsWithItsContextAndLeavesNoSubscription(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		s := redistest.Start(t)
		raw := s.Client(t)
		i := newSemIssuer(t, k.server(t, s), s)
		mustSemAcquire(t, i, "job", 1, 30*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := i.AcquireWait(ctx, "job", 1, time.Second); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, semaphore.ErrFull) {
			t.Fatalf("AcquireWait past its ctx: %v, want context.DeadlineExceeded and ErrFull", err)
		}
		if took := time.Since(start); took > 200*time.Millisecond+100*time.Millisecond {
			t.Fatalf("returned %v after a 200ms ctx", took)
		}
		semWaitFor(t, 2*time.Second, "subscription gone", func() bool { return semSubscribers(t, raw, s, "job") == 0 })
	})
}

// With Redis frozen the middleware answers within its Timeout: serving the
// request unlimited (failing open, the default) or refusing it with 503
// (FailClosed). (Of package httpsem: the answer's time is the client's,
// which must end a call at its context's deadline while the server is
// frozen.)
func TestSemaphoreHTTPSemMiddlewareAnswersWithinTheTimeoutWhenRedisIsFrozen(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		s := redistest.Start(t, redistest.Own())
		i := newSemIssuer(t, k.server(t, s), s)
		const timeout = 150 * time.Millisecond
		ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
		var decisions []string
		var mu sync.Mutex
		record := func(_ context.Context, e httpsem.Event) {
			mu.Lock()
			decisions = append(decisions, e.Outcome)
			mu.Unlock()
		}
		open := newSemHTTPServer(t, httpsem.Config{Issuer: i, Key: semByHeader, Capacity: 1, Timeout: timeout, Hook: record}, ok)
		closed := newSemHTTPServer(t, httpsem.Config{Issuer: i, Key: semByHeader, Capacity: 1, Timeout: timeout, FailClosed: true, Hook: record}, ok)
		// One request first, so the server has the scripts, as one in use does:
		// the acquires sent while it is frozen then run when it wakes.
		warm := semGet(t, open.URL, "warm")
		warm.Body.Close()
		if warm.StatusCode != http.StatusOK {
			t.Fatalf("request before the freeze: %d", warm.StatusCode)
		}
		decisions = nil
		s.Freeze(t)
		thawed := false
		defer func() {
			if !thawed {
				s.Thaw(t)
			}
		}()
		for _, tc := range []struct {
			srv  *httptest.Server
			want int
		}{{open, http.StatusOK}, {closed, http.StatusServiceUnavailable}} {
			start := time.Now()
			res := semGet(t, tc.srv.URL, "a")
			res.Body.Close()
			took := time.Since(start)
			t.Logf("Redis frozen: %d after %v (timeout %v)", res.StatusCode, took, timeout)
			if res.StatusCode != tc.want || took > timeout+250*time.Millisecond {
				t.Fatalf("%d after %v, want %d within the timeout %v", res.StatusCode, took, tc.want, timeout)
			}
		}
		if len(decisions) != 2 || decisions[0] != "failed_open" || decisions[1] != "failed_closed" {
			t.Fatalf("decisions %v", decisions)
		}
		// The timed-out acquires run when the server wakes (the first is
		// granted: the counter appears), and the Issuer gives the permit back:
		// no place stays taken for the 30s TTL.
		s.Thaw(t)
		thawed = true
		start := time.Now()
		counter := s.Prefix() + "semaphore:{client:a}:token" // set by a grant only
		raw := s.Client(t)
		for {
			h, err := i.Holders(context.Background(), "client:a")
			if err == nil && len(h) == 0 && raw.Exists(context.Background(), counter).Val() == 1 {
				break
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("%d permits of timed-out acquires still live 5s after the thaw (%v)", len(h), err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		t.Logf("the timed-out acquires' permits were given back within %v of the thaw", time.Since(start))
	})
}

// newSemIssuer returns an Issuer on client, its keys under s's prefix.
func newSemIssuer(t testing.TB, client semaphore.Client, s *redistest.Server, opts ...semaphore.Option) *semaphore.Issuer {
	t.Helper()
	i, err := semaphore.New(client, append([]semaphore.Option{semaphore.WithPrefix(s.Prefix() + "semaphore:")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// semPermitsKey follows the key layout of semaphore's package doc.
func semPermitsKey(s *redistest.Server, name string) string {
	return s.Prefix() + "semaphore:{" + name + "}"
}

func mustSemAcquire(t testing.TB, i *semaphore.Issuer, name string, capacity int, ttl time.Duration) *semaphore.Permit {
	t.Helper()
	p, err := i.Acquire(context.Background(), name, capacity, ttl)
	if err != nil {
		t.Fatalf("acquire %q: %v", name, err)
	}
	return p
}

func mustSemRelease(t testing.TB, i *semaphore.Issuer, p *semaphore.Permit) {
	t.Helper()
	if ok, err := i.Release(context.Background(), p); err != nil || !ok {
		t.Fatalf("release %q token %d: %v, %v", p.Name, p.Token, ok, err)
	}
}

func semHolders(t testing.TB, i *semaphore.Issuer, name string) []semaphore.Holder {
	t.Helper()
	h, err := i.Holders(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// semWaitFor polls cond until it holds, failing t after within.
func semWaitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// semSubscribers returns how many connections subscribe to name's release
// channel (layout in semaphore's package doc).
func semSubscribers(t testing.TB, c *redis.Client, s *redistest.Server, name string) int64 {
	t.Helper()
	ch := semPermitsKey(s, name) + ":released"
	m, err := c.PubSubNumSub(context.Background(), ch).Result()
	if err != nil {
		t.Fatal(err)
	}
	return m[ch]
}

// semMarked reports whether a waiter has marked name, as it does on each
// refused attempt once subscribed.
func semMarked(t testing.TB, c *redis.Client, s *redistest.Server, name string) bool {
	t.Helper()
	n, err := c.Exists(context.Background(), semPermitsKey(s, name)+":waiting").Result()
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

type semWaited struct {
	p    *semaphore.Permit
	err  error
	woke time.Time
}

// startSemWaiter runs AcquireWait in a goroutine and returns once it has
// subscribed and marked the semaphore: asleep until something wakes it.
func startSemWaiter(t *testing.T, i *semaphore.Issuer, raw *redis.Client, s *redistest.Server, name string, capacity int) <-chan semWaited {
	t.Helper()
	out := make(chan semWaited, 1)
	go func() {
		p, err := i.AcquireWait(context.Background(), name, capacity, 10*time.Second)
		out <- semWaited{p, err, time.Now()}
	}()
	semWaitFor(t, 5*time.Second, "the waiter subscribed and marked the semaphore", func() bool {
		return semSubscribers(t, raw, s, name) == 1 && semMarked(t, raw, s, name)
	})
	return out
}

func semByHeader(r *http.Request) (string, error) { return "client:" + r.Header.Get("X-Client"), nil }

// newSemHTTPServer serves handler behind the httpsem middleware made from
// cfg.
func newSemHTTPServer(t *testing.T, cfg httpsem.Config, handler http.Handler) *httptest.Server {
	t.Helper()
	m, err := httpsem.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Handler(handler))
	t.Cleanup(srv.Close)
	return srv
}

// semGet sends a GET to url with X-Client client.
func semGet(t *testing.T, url, client string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Client", client)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
