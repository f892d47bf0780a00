package lock_test

import (
	"context"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// subscribers returns how many connections subscribe to name's release
// channel (layout documented on Locker).
func subscribers(t testing.TB, c *redis.Client, s *redistest.Server, name string) int64 {
	t.Helper()
	m, err := c.PubSubNumSub(context.Background(), lockKey(s, name)+":released").Result()
	if err != nil {
		t.Fatal(err)
	}
	return m[lockKey(s, name)+":released"]
}

var evalshaCalls = regexp.MustCompile(`cmdstat_evalsha:calls=(\d+)`)

// scriptCalls returns how many EVALSHA the server has run: each Acquire is one.
func scriptCalls(t testing.TB, c *redis.Client) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := evalshaCalls.FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestAcquireWaitAcquiresWhenACrashedHoldersLeaseExpires(t *testing.T) {
	s := redistest.Start(t)
	holder := newLocker(t, s, lock.WithCounterTokens())
	waiter := newLocker(t, s, lock.WithCounterTokens(), lock.WithWaitBackoff(10*time.Second, 10*time.Second))
	const ttl = 300 * time.Millisecond
	crashed := mustAcquire(t, holder, "job", ttl) // never released
	got, err := waiter.AcquireWait(context.Background(), "job", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	late := time.Since(crashed.RequestedAt) - ttl
	t.Logf("crashed holder: waiter acquired %v after the lease's expiry (ttl %v, fallback 10s)", late, ttl)
	if got.Token != crashed.Token+1 {
		t.Fatalf("token %d, want %d", got.Token, crashed.Token+1)
	}
	// The server counts the TTL from when it received the acquire, after
	// RequestedAt: acquiring earlier than this would be a bug. The waiter
	// sleeps until the expiry the server told it (its fallback is 10 s),
	// then one round trip: a few milliseconds on an idle machine, 204 ms
	// once under make test on two busy cores; within one TTL it is the
	// expiry that woke it.
	if late < 0 || late > ttl {
		t.Fatalf("acquired %v after expiry, want within one TTL (%v) of it", late, ttl)
	}
}

// Waiters queue up behind one holder: each release hands the lock to exactly
// one of them, and tokens keep increasing.
func TestAcquireWaitHandsTheLockToOneWaiterAtATime(t *testing.T) {
	s := redistest.Start(t)
	const waiters = 8
	var (
		mu      sync.Mutex
		holding int
		tokens  []int64
		wg      sync.WaitGroup
	)
	for range waiters {
		l := newLocker(t, s)
		wg.Go(func() {
			lease, err := l.AcquireWait(context.Background(), "job", 5*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			holding++
			if holding != 1 {
				t.Errorf("%d holders at once", holding)
			}
			tokens = append(tokens, lease.Token)
			mu.Unlock()
			time.Sleep(5 * time.Millisecond) // the work
			mu.Lock()
			holding--
			mu.Unlock()
			if ok, err := l.Release(context.Background(), lease); err != nil || !ok {
				t.Errorf("release: %v, %v", ok, err)
			}
		})
	}
	wg.Wait()
	if len(tokens) != waiters {
		t.Fatalf("%d of %d waiters acquired", len(tokens), waiters)
	}
	for i := 1; i < len(tokens); i++ {
		if tokens[i] <= tokens[i-1] {
			t.Fatalf("tokens %v not strictly increasing", tokens)
		}
	}
}

var publishCalls = regexp.MustCompile(`cmdstat_publish:calls=(\d+)`)

// commandCalls returns how many times the server has run the command re
// counts, scripts' calls included.
func commandCalls(t testing.TB, c *redis.Client, re *regexp.Regexp) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := re.FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// A waiter marks the lock it waits for so that the release is published.
// The mark must not change what the holder sees or can do: its owner in
// Holder and HeldError, Extend, Release.
func TestAWaitersMarkLeavesTheHoldersOwnerExtendAndReleaseIntact(t *testing.T) {
	s := redistest.Start(t, redistest.Own()) // commandstats must count only this test
	raw := s.Client(t)
	holder := newLocker(t, s, lock.WithCounterTokens(), lock.WithOwner("node a"))
	waiter := newLocker(t, s, lock.WithCounterTokens(), lock.WithWaitBackoff(10*time.Second, 10*time.Second))
	ctx := context.Background()

	lease := mustAcquire(t, holder, "job", 30*time.Second)
	before := scriptCalls(t, raw)
	var (
		got *lock.Lease
		err error
		wg  sync.WaitGroup
	)
	wg.Go(func() { got, err = waiter.AcquireWait(ctx, "job", time.Second) })
	waitFor(t, 5*time.Second, "the waiter subscribed and was refused twice", func() bool {
		return subscribers(t, raw, s, "job") == 1 && scriptCalls(t, raw) >= before+2
	})
	if v := raw.Get(ctx, lockKey(s, "job")).Val(); !strings.HasPrefix(v, "*") || !strings.HasSuffix(v, " node a") {
		t.Fatalf("lock value %q while a waiter waits, want \"*<id> node a\"", v)
	}
	if h, herr := holder.Holder(ctx, "job"); herr != nil || h.Owner != "node a" || h.Token != lease.Token {
		t.Fatalf("holder of a marked lock = %+v, %v; want owner \"node a\", token %d", h, herr, lease.Token)
	}
	var held *lock.HeldError
	if _, aerr := newLocker(t, s).Acquire(ctx, "job", time.Second); !errors.As(aerr, &held) || held.Owner != "node a" || held.Token != lease.Token {
		t.Fatalf("acquire of a marked lock: %v; want held by \"node a\", token %d", aerr, lease.Token)
	}
	if eerr := holder.Extend(ctx, lease, 30*time.Second); eerr != nil {
		t.Fatalf("extend of a marked lock: %v", eerr)
	}
	published := commandCalls(t, raw, publishCalls)
	if ok, rerr := holder.Release(ctx, lease); rerr != nil || !ok {
		t.Fatalf("release of a marked lock: %v, %v", ok, rerr)
	}
	if n := commandCalls(t, raw, publishCalls) - published; n != 1 {
		t.Fatalf("release of a marked lock published %d times, want 1", n)
	}
	wg.Wait()
	if err != nil || got.Token != lease.Token+1 {
		t.Fatalf("waiter: %+v, %v; want token %d", got, err, lease.Token+1)
	}
}

// With nobody waiting, a release costs no PUBLISH.
func TestReleaseNobodyWaitsForPublishesNothing(t *testing.T) {
	s := redistest.Start(t, redistest.Own()) // commandstats must count only this test
	raw := s.Client(t)
	l := newLocker(t, s)
	ctx := context.Background()
	for range 3 {
		lease := mustAcquire(t, l, "job", time.Second)
		if _, err := l.Acquire(ctx, "job", time.Second); !errors.Is(err, lock.ErrHeld) {
			t.Fatalf("second acquire: %v, want ErrHeld", err)
		}
		if ok, err := l.Release(ctx, lease); err != nil || !ok {
			t.Fatalf("release: %v, %v", ok, err)
		}
	}
	if n := commandCalls(t, raw, publishCalls); n != 0 {
		t.Fatalf("%d PUBLISH for releases nobody waited for, want 0", n)
	}
}

// A huge backoff ceiling (election passes its RetryInterval) must not
// overflow the doubling: the waiter keeps waiting until its context ends.
//
// The waiter is woken by notifications the test publishes on the release
// channel, not by a short lease's expiries: the holder's lease outlives the
// test, so no starved renewal can hand the waiter the lock, and the test
// ends after a count of attempts, not after a time, so a slow machine only
// makes it slower.
func TestAcquireWaitWithAHugeBackoffCeilingWaitsWithoutPanicking(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	raw := s.Client(t)
	holder := newLocker(t, s)
	waiter := newLocker(t, s, lock.WithWaitBackoff(time.Second, math.MaxInt64))
	mustAcquire(t, holder, "job", time.Hour)
	// 64 doublings of 1s overflow int64 twice over.
	const attempts = 64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			_ = raw.Publish(ctx, lockKey(s, "job")+":released", "").Err()
			time.Sleep(time.Millisecond)
		}
	})
	before := scriptCalls(t, raw)
	errc := make(chan error, 1)
	go func() {
		_, err := waiter.AcquireWait(ctx, "job", time.Second)
		errc <- err
	}()
	waitFor(t, time.Minute, "the waiter made its attempts", func() bool {
		select {
		case err := <-errc:
			t.Fatalf("AcquireWait returned early: %v", err)
		default:
		}
		return scriptCalls(t, raw) >= before+attempts
	})
	cancel()
	wg.Wait()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("AcquireWait against a held lock: %v, want context.Canceled", err)
	}
}
