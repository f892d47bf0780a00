package clienttest_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// Helpers of lock_test.go. Their names carry "lock", as fence's, election's
// and semaphore's carry theirs: all share this package.

// lockBatching is one way a test whose outcome batching can change runs:
// unbatched, or WithBatching(16), as the batched pass of make test ran
// lock's whole suite.
type lockBatching struct {
	name string
	opts []lock.Option
}

var lockBatchings = []lockBatching{
	{name: "unbatched"},
	{name: "batched", opts: []lock.Option{lock.WithBatching(16)}},
}

// eachLockBatching runs f unbatched, then WithBatching(16), each in a
// subtest of its own, one after the other: the kinds already run in
// parallel, and these tests measure time.
func eachLockBatching(t *testing.T, f func(t *testing.T, opts []lock.Option)) {
	t.Helper()
	for _, b := range lockBatchings {
		t.Run(b.name, func(t *testing.T) { f(t, b.opts) })
	}
}

// newLockLocker returns a Locker on client, its keys under s's prefix.
func newLockLocker(t testing.TB, client lock.Client, s *redistest.Server, opts ...lock.Option) *lock.Locker {
	t.Helper()
	l, err := lock.New(client, append([]lock.Option{lock.WithPrefix(s.Prefix() + "lock:")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// lockKey and lockCounterKey follow the key layout lock's package doc
// documents, under newLockLocker's prefix.
func lockKey(s *redistest.Server, name string) string { return s.Prefix() + "lock:{" + name + "}" }
func lockCounterKey(s *redistest.Server, name string) string {
	return lockKey(s, name) + ":token"
}

// lockWaitFor polls cond until it holds or within passes; it fails t then.
func lockWaitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// lockWaitGone waits until the lock called name has expired on the server.
func lockWaitGone(t testing.TB, l *lock.Locker, name string, within time.Duration) {
	t.Helper()
	lockWaitFor(t, within, "lock "+name+" expired", func() bool {
		h, err := l.Holder(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		return !h.Held
	})
}

func mustLockAcquire(t testing.TB, l *lock.Locker, name string, ttl time.Duration) *lock.Lease {
	t.Helper()
	lease, err := l.Acquire(context.Background(), name, ttl)
	if err != nil {
		t.Fatalf("acquire %q: %v", name, err)
	}
	return lease
}

var lockEvalshaCalls = regexp.MustCompile(`cmdstat_evalsha:calls=(\d+)`)

// lockScriptCalls returns how many EVALSHA the server has run: each
// Acquire is one.
func lockScriptCalls(t testing.TB, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := lockEvalshaCalls.FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// lockSubscribers returns how many connections subscribe to name's
// release channel (layout documented in lock's package doc).
func lockSubscribers(t testing.TB, c *redis.Client, s *redistest.Server, name string) int64 {
	t.Helper()
	m, err := c.PubSubNumSub(context.Background(), lockKey(s, name)+":released").Result()
	if err != nil {
		t.Fatal(err)
	}
	return m[lockKey(s, name)+":released"]
}

// The Sentinel test's acquirers.

// lockTokenScheme is one way lock issues fencing tokens.
type lockTokenScheme struct {
	name string
	opts []lock.Option
	// monotonic: a token issued after a failover is above every token
	// issued before it.
	monotonic bool
}

// lockTokenSchemes returns the token schemes the Sentinel test runs side
// by side, each with its own lock name and keys: the counter alone
// (lock.WithCounterTokens), which a failover can move backwards, and
// lock's default, max(counter+1, the server's clock in µs), which it must
// not.
func lockTokenSchemes() []lockTokenScheme {
	return []lockTokenScheme{
		{name: "counter-only", opts: []lock.Option{lock.WithCounterTokens()}},
		{name: "hybrid clock", monotonic: true},
	}
}

// lockAcquisition is one lease handed out, with when its acquire was sent
// and when it returned.
type lockAcquisition struct {
	token     int64
	sent, got time.Time
	// deadline is the lease's deadline with a margin of a tenth of the TTL;
	// released is when the holder sent the release, zero when it let the
	// lease expire.
	deadline, released time.Time
}

// until is when the holder stops counting on the lease: when it sent the
// release or at its deadline, whichever came first. A holder that sends
// its release after the deadline has held past its lease on its own; the
// lease promised it nothing then.
func (g lockAcquisition) until() time.Time {
	if !g.released.IsZero() && g.released.Before(g.deadline) {
		return g.released
	}
	return g.deadline
}

// lockAcquirers take one lock name again and again, each on a failover
// client of its own, and record every lease they were given.
type lockAcquirers struct {
	mu   sync.Mutex
	got  []lockAcquisition
	stop func()
}

func startLockAcquirers(t *testing.T, k kind, sen *redistest.Sentinel, opts []lock.Option, prefix string, n int) *lockAcquirers {
	t.Helper()
	a := &lockAcquirers{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range n {
		l, err := lock.New(k.failover(t, sen), append([]lock.Option{lock.WithPrefix(prefix), lock.WithOwner(fmt.Sprint(i))}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for ctx.Err() == nil {
				ttl := time.Duration(50+rng.IntN(200)) * time.Millisecond
				sent := time.Now()
				actx, cancelCall := context.WithTimeout(ctx, 2*redistest.SentinelDownAfter)
				lease, err := l.Acquire(actx, "job", ttl)
				cancelCall()
				var held *lock.HeldError
				switch {
				case err == nil:
					g := lockAcquisition{token: lease.Token, sent: sent, got: time.Now(), deadline: lease.Deadline(ttl / 10)}
					// Hold for a random part of the lease; then release, or
					// (one in three) let the lease expire. A lease whose
					// WAIT took most of its TTL is released past its
					// deadline.
					release := rng.IntN(3) != 0
					if release {
						lockPause(ctx, time.Duration(rng.Int64N(int64(ttl/2))))
						g.released = time.Now()
					}
					a.mu.Lock()
					a.got = append(a.got, g)
					a.mu.Unlock()
					if release {
						rctx, cancelCall := context.WithTimeout(ctx, 2*redistest.SentinelDownAfter)
						_, _ = l.Release(rctx, lease)
						cancelCall()
					}
				case errors.As(err, &held):
					lockPause(ctx, min(held.TTL, 10*time.Millisecond)+time.Millisecond)
				default:
					lockPause(ctx, 10*time.Millisecond)
				}
			}
		}()
	}
	a.stop = func() { cancel(); wg.Wait() }
	t.Cleanup(a.stop)
	return a
}

func lockPause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// count returns how many leases were handed out.
func (a *lockAcquirers) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.got)
}

// reissued counts, among the leases whose acquire was sent at or after
// from, those whose token is not above the token of a lease that had been
// returned before their acquire was sent: a token handed out again, or
// lower than one already handed out. It also returns the highest token
// returned before from and how many leases were counted.
func (a *lockAcquirers) reissued(from time.Time) (reissued int, highestBefore int64, counted int) {
	a.mu.Lock()
	got := slices.Clone(a.got)
	a.mu.Unlock()
	byGot := slices.Clone(got)
	slices.SortFunc(byGot, func(x, y lockAcquisition) int { return x.got.Compare(y.got) })
	slices.SortFunc(got, func(x, y lockAcquisition) int { return x.sent.Compare(y.sent) })
	var highest int64
	j := 0
	for _, y := range got {
		for j < len(byGot) && byGot[j].got.Before(y.sent) {
			highest = max(highest, byGot[j].token)
			j++
		}
		if y.sent.Before(from) {
			highestBefore = highest
			continue
		}
		counted++
		if y.token <= highest {
			reissued++
		}
	}
	return reissued, highestBefore, counted
}

// overlapping counts the leases returned at or after from that began while
// another holder still counted on its own, within that lease's deadline:
// two holders at once. pastDeadline counts those that began only while a
// holder kept a lease past its deadline (it released it later than that):
// the measure before issue 25 counted them too, and they are no overlap.
func (a *lockAcquirers) overlapping(from time.Time) (overlaps, pastDeadline int) {
	a.mu.Lock()
	got := slices.Clone(a.got)
	a.mu.Unlock()
	return countLockOverlaps(got, from)
}

func countLockOverlaps(got []lockAcquisition, from time.Time) (overlaps, pastDeadline int) {
	slices.SortFunc(got, func(x, y lockAcquisition) int { return x.got.Compare(y.got) })
	var until, held time.Time // the latest until, and the latest release
	for _, g := range got {
		if !g.got.Before(from) {
			switch {
			case g.got.Before(until):
				overlaps++
			case g.got.Before(held):
				pastDeadline++
			}
		}
		if u := g.until(); u.After(until) {
			until = u
		}
		if g.released.After(held) {
			held = g.released
		}
	}
	return overlaps, pastDeadline
}
