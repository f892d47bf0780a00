package clienttest_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// The tests of package fence whose outcome depends on the client: killed
// connections, a frozen server, a Cluster, failovers the client must
// follow. Their names carry "Fence" ("Fenced" or "Fence" after "Test"):
// lock's tests of the same names share this package. The failover
// histories' helpers are in fence_history_test.go.

// eachFenceBatching runs f once unbatched and once with WithBatching(16),
// in subtests run one after the other: a fenced write keeps each guarantee
// whether it goes alone or in a batch with the writes of the same moment.
func eachFenceBatching(t *testing.T, f func(t *testing.T, opts ...fence.Option)) {
	t.Helper()
	t.Run("unbatched", func(t *testing.T) { f(t) })
	t.Run("batched", func(t *testing.T) { f(t, fence.WithBatching(16)) })
}

// A client sends a command again, and a pipeline again, when the
// connection fails before the reply is read (go-redis's MaxRetries
// defaults to 3). A fenced write that had landed then landed twice: an
// Eval that counts counted twice. With the client's default options and
// connections killed under load, what the server counted lies between the
// writes reported accepted and those plus the writes that returned an
// error.
func TestFencedWriteLandsOnceWhenTheClientResendsItAfterAKilledConnection(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		eachFenceBatching(t, func(t *testing.T, opts ...fence.Option) {
			s := redistest.Start(t, redistest.Own())
			store, err := fence.New(k.server(t, s), opts...)
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
				wg.Go(func() {
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
				})
			}
			kill := s.KillClients(t, 3*time.Millisecond)
			time.Sleep(1500 * time.Millisecond)
			close(stop)
			wg.Wait()
			killed := kill()
			// Counted on a go-redis client of its own, made after the
			// kills, with a deadline all the same.
			rdb := s.Client(t)
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			counted := int64(0)
			for i := range keys {
				n, err := rdb.Get(rctx, key(i)).Int64()
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
		})
	})
}

// A fenced write sent to a frozen server times out, and the server runs it
// when it wakes: the caller got context.DeadlineExceeded, and the value and
// the high-water mark changed all the same. A timeout does not mean "not
// written"; a holder that must know reads the key (or the mark) again.
func TestFencedWriteThatTimedOutOnAFrozenServerStillLandsOnceItWakes(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		eachFenceBatching(t, func(t *testing.T, opts ...fence.Option) {
			s := redistest.Start(t, redistest.Own())
			store, err := fence.New(k.server(t, s), opts...)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			key := s.Prefix() + "balance"
			// Load the script: a first EVALSHA that times out runs nothing (the
			// server answers NOSCRIPT when it wakes).
			if err := store.Set(ctx, 1, key, "100"); err != nil {
				t.Fatal(err)
			}
			const timeout = 50 * time.Millisecond
			s.Freeze(t)
			wctx, cancel := context.WithTimeout(ctx, timeout)
			err = store.Set(wctx, 2, key, "120")
			cancel()
			s.Thaw(t)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("write on a frozen server: %v; want a deadline", err)
			}
			var v string
			deadline := time.Now().Add(100 * timeout)
			for {
				if v, err = store.Get(ctx, key); err != nil {
					t.Fatal(err)
				}
				if v == "120" || time.Now().After(deadline) {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
			highest, err := store.Highest(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if v != "120" || highest != 2 {
				t.Fatalf("after the thaw: value %q, mark %d; want 120 and 2: the timed-out write ran when the server woke", v, highest)
			}
			t.Logf("the write that timed out after %v landed once the server woke: value %q, mark %d", timeout, v, highest)
		})
	})
}

// On Redis Cluster every script must touch one slot. A real Cluster (three
// primaries, a replica each) answers CROSSSLOT otherwise, so this runs each
// write on one.
func TestFencedWritesRunOnRedisClusterWithMarkInTheDataSlot(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		eachFenceBatching(t, func(t *testing.T, opts ...fence.Option) {
			cl := redistest.StartCluster(t)
			cc := cl.Client(t)
			ctx := context.Background()

			// The node refuses a script whose keys span slots: the check is real.
			if err := cc.Eval(ctx, "return 1", []string{"{a}x", "{b}y"}).Err(); err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
				t.Fatalf("cross-slot script: %v, want CROSSSLOT", err)
			}

			client := k.cluster(t, cl)
			perKey, err := fence.New(client, opts...)
			if err != nil {
				t.Fatal(err)
			}
			scoped, err := fence.New(client, append(opts, fence.WithScope("orders"))...)
			if err != nil {
				t.Fatal(err)
			}
			// Untagged keys, tagged keys, a key with a lone '{': each one's mark
			// hashes like the key, or the node would answer CROSSSLOT.
			for _, key := range []string{"account:42", "{user:7}:profile", "app:{u:8}:cart"} {
				if err := perKey.Set(ctx, 2, key, "v2"); err != nil {
					t.Fatalf("set %q on a cluster: %v", key, err)
				}
				wantFenceStale(t, perKey.Set(ctx, 1, key, "v1"), 1, 2)
				if _, err := perKey.Eval(ctx, 2, "redis.call('SET', KEYS[2], ARGV[2])", []string{key}, "v3"); err != nil {
					t.Fatalf("eval %q on a cluster: %v", key, err)
				}
				if got := mustFenceGet(t, perKey, key); got != "v3" {
					t.Fatalf("%q = %q, want v3", key, got)
				}
				if h := mustFenceHighest(t, perKey, key); h != 2 {
					t.Fatalf("highest %q = %d", key, h)
				}
			}
			if err := perKey.HSet(ctx, 1, "hash:9", "f", "v"); err != nil {
				t.Fatalf("hset on a cluster: %v", err)
			}
			// A brace with no tag: no mark under the key's name can share the
			// slot, refused up front.
			for _, key := range []string{"x{}", "a{b", "a}b"} {
				if err := perKey.Set(ctx, 1, key, "v"); !errors.Is(err, fence.ErrCrossSlot) {
					t.Fatalf("%s: %v, want ErrCrossSlot", key, err)
				}
			}

			// A scope: several keys, one mark, one slot.
			f := scoped.Fencer(5)
			if err := f.Set(ctx, f.Key("cursor"), "c"); err != nil {
				t.Fatal(err)
			}
			if err := f.HSet(ctx, f.Key("totals"), "eur", 10); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Eval(ctx, "redis.call('RPUSH', KEYS[2], ARGV[2]); redis.call('SET', KEYS[3], ARGV[2])",
				[]string{f.Key("log"), f.Key("last")}, "e1"); err != nil {
				t.Fatalf("multi-key eval in a scope on a cluster: %v", err)
			}
			_, err = scoped.Eval(ctx, 4, "redis.call('SET', KEYS[2], 'stale')", []string{scoped.Key("last")})
			wantFenceStale(t, err, 4, 5)
		})
	})
}

// A mark is named after what it guards, so an ACL key pattern that covers
// the data covers its mark, and it sits in the data's slot: checked with
// CLUSTER KEYSLOT on a real Cluster, for untagged and tagged keys and
// both kinds of scope, with no doubled suffix.
func TestFenceMarksShareTheDataPrefixAndSlotOnRedisCluster(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		eachFenceBatching(t, func(t *testing.T, opts ...fence.Option) {
			cl := redistest.StartCluster(t)
			cc := cl.Client(t)
			client := k.cluster(t, cl)
			ctx := context.Background()
			perKey, err := fence.New(client, opts...)
			if err != nil {
				t.Fatal(err)
			}
			bare, err := fence.New(client, append(opts, fence.WithScope("job"))...)
			if err != nil {
				t.Fatal(err)
			}
			prefixed, err := fence.New(client, append(opts, fence.WithScope("app:{job}"))...)
			if err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				store     *fence.Store
				key, mark string
			}{
				{perKey, "app:x", "app:x:fence{app:x}"},
				{perKey, "{app:x}", "{app:x}:fence"},
				{perKey, "app:{u:7}:profile", "app:{u:7}:profile:fence"},
				{bare, bare.Key("cursor"), "{job}:fence"},
				{prefixed, prefixed.Key("cursor"), "app:{job}:fence"},
			}
			for _, tc := range cases {
				if err := tc.store.Set(ctx, 3, tc.key, "v"); err != nil {
					t.Fatalf("set %q: %v", tc.key, err)
				}
				if v, err := cc.Get(ctx, tc.mark).Result(); err != nil || v != "3" {
					t.Fatalf("mark of %q: GET %q = %q, %v; want the token 3", tc.key, tc.mark, v, err)
				}
				ks, err := cc.ClusterKeySlot(ctx, tc.key).Result()
				if err != nil {
					t.Fatal(err)
				}
				ms, err := cc.ClusterKeySlot(ctx, tc.mark).Result()
				if err != nil {
					t.Fatal(err)
				}
				if ks != ms {
					t.Fatalf("%q is in slot %d, its mark %q in %d", tc.key, ks, tc.mark, ms)
				}
				if strings.Count(tc.mark, ":fence") != 1 {
					t.Fatalf("mark %q repeats its suffix", tc.mark)
				}
			}
			if got := prefixed.Key("cursor"); got != "app:{job}:cursor" {
				t.Fatalf("Key = %q, want app:{job}:cursor", got)
			}
			// Both marks of the prefixed scope's keys and the untagged key are
			// under "app:"; the tagged key "{app:x}" is not, and neither is its data.
			for _, m := range []string{"app:x:fence{app:x}", "app:{u:7}:profile:fence", "app:{job}:fence"} {
				if !strings.HasPrefix(m, "app:") {
					t.Fatalf("%q is outside app:*", m)
				}
			}
		})
	})
}

// With Sentinel failing the primary over again and again (SENTINEL FAILOVER,
// SIGKILL, SIGSTOP past down-after in turn), many holders take one lock,
// with random TTLs, some releasing, some letting the lease expire, some
// pausing past their lease before their last write, and write under the
// fence to a store that is not failed over. A write is stale when it was
// accepted after a holder that acquired the lock strictly later had a write
// accepted. Counter-only tokens go back whenever a promoted replica missed
// the last INCRs, and their stale writes are counted and shown; tokens that
// never go back must let none through. Each holder's client must follow
// the failovers. The writes are not batched: the store is not failed over.
func TestFenceSentinelFailoversLetStaleWritesThroughOnlyWhenTokensGoBack(t *testing.T) {
	eachClientLong(t, func(t *testing.T, k kind) {
		sen := redistest.StartSentinel(t)
		faults := []func(testing.TB) redistest.Failover{sen.Failover, sen.KillPrimary, sen.FreezePrimary}
		names := []string{"SENTINEL FAILOVER", "SIGKILL", "SIGSTOP"}
		runFencedHistory(t, k, func(t testing.TB) luascripts.Client { return k.failover(t, sen) },
			func(t testing.TB, i int) (string, redistest.Failover) {
				return names[i%len(names)], faults[i%len(faults)](t)
			}, fenceMinFailovers, fenceMinWrites)
	})
}

// The same history on a real Redis Cluster of three primaries with a
// replica each: the primary serving the lock's slot is failed over by
// CLUSTER FAILOVER on its replica and by SIGKILL in turn.
func TestFenceClusterFailoversLetStaleWritesThroughOnlyWhenTokensGoBack(t *testing.T) {
	eachClientLong(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t)
		key := fenceLockKey(0, 0) // every lock is in this key's slot
		runFencedHistory(t, k, func(t testing.TB) luascripts.Client { return k.cluster(t, cl) },
			func(t testing.TB, i int) (string, redistest.Failover) {
				if i%2 == 0 {
					return "CLUSTER FAILOVER", cl.FailoverReplica(t, key)
				}
				return "SIGKILL", cl.KillPrimary(t, key)
			}, 6, 1_000)
	})
}

func mustFenceGet(t *testing.T, store *fence.Store, key string) string {
	t.Helper()
	v, err := store.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return v
}

func mustFenceHighest(t *testing.T, store *fence.Store, key string) int64 {
	t.Helper()
	n, err := store.Highest(context.Background(), key)
	if err != nil {
		t.Fatalf("highest %q: %v", key, err)
	}
	return n
}

// wantFenceStale fails t unless err is a *fence.StaleError for token with
// highest.
func wantFenceStale(t *testing.T, err error, token, highest int64) {
	t.Helper()
	var se *fence.StaleError
	if !errors.Is(err, fence.ErrStale) || !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *StaleError matching ErrStale", err)
	}
	if se.Token != token || se.Highest != highest {
		t.Fatalf("StaleError{Token: %d, Highest: %d}, want {%d, %d}", se.Token, se.Highest, token, highest)
	}
}
