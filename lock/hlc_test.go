package lock_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// A counter loss, as a deployment meets it: the server that issues the next
// token has lost (or never had) the counter's last increments. It returns
// the server to acquire on afterwards.
type counterLoss func(t *testing.T, s *redistest.Server) *redistest.Server

var counterLosses = map[string]counterLoss{
	"FLUSHALL": func(t *testing.T, s *redistest.Server) *redistest.Server {
		if err := s.Client(t).FlushAll(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		return s
	},
	"restart without persistence": func(t *testing.T, s *redistest.Server) *redistest.Server {
		s.Kill(t)
		s.Restart(t)
		return s
	},
}

// issueThenLose issues tokens on s with opts (the last one by a lease on a
// primary only, when a replica is cut off), loses the counter, and returns
// every earlier token and the first one issued after the loss.
func issueThenLose(t *testing.T, s *redistest.Server, lose counterLoss, opts ...lock.Option) (before []int64, after int64) {
	t.Helper()
	ctx := context.Background()
	l := newLocker(t, s, opts...)
	for range 3 {
		lease := mustAcquire(t, l, "job", time.Second)
		before = append(before, lease.Token)
		if ok, err := l.Release(ctx, lease); err != nil || !ok {
			t.Fatalf("release: %v, %v", ok, err)
		}
	}
	next := lose(t, s)
	l = newLocker(t, next, opts...)
	var lease *lock.Lease
	waitFor(t, 5*time.Second, "acquire works after the loss", func() bool {
		var err error
		lease, err = l.Acquire(ctx, "job", time.Second)
		return err == nil
	})
	return before, lease.Token
}

func TestFirstTokenAfterLosingTheCounterIsAboveEveryEarlierToken(t *testing.T) {
	for name, lose := range counterLosses {
		t.Run(name, func(t *testing.T) {
			before, after := issueThenLose(t, redistest.Start(t, redistest.Own()), lose)
			t.Logf("%s: tokens %v, then %d", name, before, after)
			if after <= before[len(before)-1] {
				t.Fatalf("after %s: token %d, not above the earlier %v", name, after, before)
			}
		})
	}
}

func TestLosingTheCounterReissuesCounterTokens(t *testing.T) {
	for name, lose := range counterLosses {
		t.Run(name, func(t *testing.T) {
			before, after := issueThenLose(t, redistest.Start(t, redistest.Own()), lose, lock.WithCounterTokens())
			t.Logf("%s: counter tokens %v, then %d", name, before, after)
			if after != before[0] {
				t.Fatalf("after %s: counter token %d; want %d reissued", name, after, before[0])
			}
		})
	}
}

// promoteLagging acquires on a primary whose replica is cut off, fails over
// to the replica, and returns the token the primary issued last and the
// promoted replica's first.
func promoteLagging(t *testing.T, opts ...lock.Option) (last, first int64) {
	t.Helper()
	primary := redistest.Start(t, redistest.Own())
	replica := primary.StartReplica(t)
	ctx := context.Background()
	a := newLocker(t, primary, opts...)
	if ok, err := a.Release(ctx, mustAcquire(t, a, "job", 10*time.Second)); err != nil || !ok {
		t.Fatalf("release: %v, %v", ok, err)
	}
	if n, err := client(t, primary).Wait(ctx, 1, 2*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT before the partition: %d, %v", n, err)
	}
	replica.Partition(t)
	for range 3 { // acquisitions the replica never sees
		lease := mustAcquire(t, a, "job", 10*time.Second)
		last = lease.Token
		if ok, err := a.Release(ctx, lease); err != nil || !ok {
			t.Fatalf("release: %v, %v", ok, err)
		}
	}
	primary.Kill(t)
	replica.Promote(t)
	return last, mustAcquire(t, newLocker(t, replica, opts...), "job", 10*time.Second).Token
}

func TestFirstTokenAfterPromotingALaggingReplicaIsAboveEveryEarlierToken(t *testing.T) {
	last, first := promoteLagging(t)
	t.Logf("the old primary issued %d last; the promoted replica issued %d", last, first)
	if first <= last {
		t.Fatalf("promoted replica issued %d, not above %d", first, last)
	}
}

func TestPromotingALaggingReplicaReissuesCounterTokens(t *testing.T) {
	last, first := promoteLagging(t, lock.WithCounterTokens())
	t.Logf("the old primary issued %d last; the promoted replica issued %d", last, first)
	if first >= last {
		t.Fatalf("promoted replica issued %d after %d; want a token reissued", first, last)
	}
}

// The bound that remains is clock skew. The old server issues a token at
// its time t0; the counter is lost and the new server, whose clock runs
// skew behind, issues the next token a failover gap later by the true clock,
// at t0 + gap - skew on its own.
func skewedFailover(t *testing.T, gap, skew time.Duration) (old, next int64) {
	t.Helper()
	s := redistest.Start(t, redistest.Own())
	t0 := time.Now()
	var clock atomic.Int64
	clock.Store(t0.UnixMicro())
	now := func() time.Time { return time.UnixMicro(clock.Load()) }
	l := newLocker(t, s, lock.WithServerTimeForTests(now))
	lease := mustAcquire(t, l, "job", time.Second)
	if ok, err := l.Release(context.Background(), lease); err != nil || !ok {
		t.Fatalf("release: %v, %v", ok, err)
	}
	if err := s.Client(t).FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	clock.Store(t0.Add(gap - skew).UnixMicro())
	return lease.Token, mustAcquire(t, l, "job", time.Second).Token
}

func TestSkewSmallerThanTheFailoverGapReissuesNoToken(t *testing.T) {
	old, next := skewedFailover(t, 2*time.Second, 50*time.Millisecond)
	if next <= old {
		t.Fatalf("skew 50ms, gap 2s: token %d after %d", next, old)
	}
}

func TestSkewLargerThanTheFailoverGapReissuesATokenAlreadyHandedOut(t *testing.T) {
	old, next := skewedFailover(t, 2*time.Second, 3*time.Second)
	t.Logf("skew 3s, gap 2s: token %d after %d", next, old)
	if next > old {
		t.Fatalf("skew 3s, gap 2s: token %d after %d; want the reissue the bound predicts", next, old)
	}
}

func TestWithCounterTokensAndWithServerTimeForTestsExcludeEachOther(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	c := goredisadapter.New(rdb)
	for _, opts := range [][]lock.Option{
		{lock.WithCounterTokens(), lock.WithServerTimeForTests(time.Now)},
		{lock.WithServerTimeForTests(time.Now), lock.WithCounterTokens()},
		{lock.WithServerTimeForTests(nil)},
	} {
		if _, err := lock.New(c, opts...); !errors.Is(err, lock.ErrInvalidOption) {
			t.Errorf("%v: want ErrInvalidOption", err)
		}
	}
}

// A failed acquire leaves nothing behind: when the counter cannot be
// written after the lock is free, the lock must not be set (it would block
// the name for a full TTL with no lease handed out).
func TestAnAcquireWhoseCounterWriteFailsLeavesNoLockBehind(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	ctx := context.Background()
	admin := s.Client(t)
	if err := admin.Do(ctx, "ACL", "SETUSER", "noincr", "on", ">pw", "~*", "&*", "+@all", "-incr", "-incrby").Err(); err != nil {
		t.Fatal(err)
	}
	denied := client(t, s, func(o *redis.Options) { o.Username, o.Password = "noincr", "pw" })
	// nocounter may write the lock ("...{job}") but not its counter
	// ("...{job}:token"), whatever the command.
	if err := admin.Do(ctx, "ACL", "SETUSER", "nocounter", "on", ">pw", "~*}", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	noCounter := client(t, s, func(o *redis.Options) { o.Username, o.Password = "nocounter", "pw" })
	for name, c := range map[string]struct {
		l       *lock.Locker
		counter string // a counter value to plant first, "" for none
	}{
		"ACL denies INCR":                       {newLockerOn(t, s, denied, lock.WithCounterTokens()), ""},
		"ACL denies the counter's key":          {newLockerOn(t, s, noCounter), ""},
		"ACL denies the counter's key, counter": {newLockerOn(t, s, noCounter, lock.WithCounterTokens()), ""},
		"counter not an integer":                {newLocker(t, s, lock.WithCounterTokens()), "x"},
		"counter not an integer, hybrid":        {newLocker(t, s), "x"},
	} {
		if err := admin.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if c.counter != "" {
			if err := admin.Set(ctx, counterKey(s, "job"), c.counter, 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		_, err := c.l.Acquire(ctx, "job", time.Minute)
		if err == nil || errors.Is(err, lock.ErrHeld) {
			t.Fatalf("%s: acquire: %v, want the server's error", name, err)
		}
		if n, xerr := admin.Exists(ctx, lockKey(s, "job")).Result(); xerr != nil || n != 0 {
			t.Fatalf("%s: the failed acquire (%v) left the lock set (%d, %v)", name, err, n, xerr)
		}
		if !strings.Contains(err.Error(), "acquire") {
			t.Fatalf("%s: %v does not say what failed", name, err)
		}
		if got, gerr := admin.Get(ctx, counterKey(s, "job")).Result(); c.counter != "" && (gerr != nil || got != c.counter) {
			t.Fatalf("%s: the failed acquire left the counter %q (%v), want %q as it was", name, got, gerr, c.counter)
		}
	}
}

func TestCheckReplicaClocksFindsNoSkewBetweenTwoServersOnOneMachine(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	r := s.StartReplica(t)
	l := newLocker(t, s)
	problems, err := l.CheckReplicaClocks(context.Background(), 100*time.Millisecond, goredisadapter.New(client(t, r)))
	if err != nil || len(problems) != 0 {
		t.Fatalf("one machine, one clock: %q, %v; want no problem", problems, err)
	}
	// A skewed replica cannot be made on one machine (libfaketime aborts
	// this redis-server); a bad bound is refused.
	if _, err := l.CheckReplicaClocks(context.Background(), -time.Second, goredisadapter.New(client(t, r))); !errors.Is(err, lock.ErrInvalidOption) {
		t.Fatalf("negative bound: %v, want ErrInvalidOption", err)
	}
}
