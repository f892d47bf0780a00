package clienttest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// The tests of package lock whose outcome depends on the client: killed
// connections counted once, a frozen or killed server, a Cluster's slot
// migration, wake-ups by a release, a Sentinel failover the client must
// follow. Their names carry "Lock" after "Test": semaphore's, fence's and
// election's tests of the same names share this package. Those where
// batching can change the outcome run unbatched and WithBatching(16).

// A client sends a command again when the connection fails before the
// reply is read (go-redis's MaxRetries defaults to 3). A release that ran
// and was sent again answered "not held" after it had released. An
// acquire may run twice (it finds its own value and answers its token),
// and must then report the lock acquired, not held by someone. With the
// client's default options and connections killed under load, on names
// nobody else takes, a call either reports what it did or returns an
// error.
func TestLockAcquireAndReleaseReportWhatTheyDidWhenTheClientResendsThemAfterAKilledConnection(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		eachLockBatching(t, func(t *testing.T, opts []lock.Option) {
			s := redistest.Start(t, redistest.Own())
			l := newLockLocker(t, k.server(t, s), s, opts...)
			ctx := context.Background()
			var acquired, released, selfHeld, notHeld, expired, errs atomic.Int64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for g := range 24 {
				wg.Go(func() {
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						// A name of its own, never taken before: ErrHeld can
						// only be this very acquire, run twice.
						lease, err := l.Acquire(ctx, "g"+strconv.Itoa(g)+"-"+strconv.Itoa(i), 2*time.Second)
						switch {
						case errors.Is(err, lock.ErrHeld):
							selfHeld.Add(1)
							continue
						case err != nil:
							errs.Add(1)
							continue
						}
						acquired.Add(1)
						ok, err := l.Release(ctx, lease)
						switch {
						case err != nil:
							errs.Add(1)
						case ok:
							released.Add(1)
						case time.Since(lease.RequestedAt) >= lease.TTL:
							// Not held because its lease expired first (its
							// calls delayed past the TTL on busy cores): no
							// evidence of a release that ran twice.
							expired.Add(1)
							t.Logf("release of %s came %v after its acquire was sent, past its TTL %v: not held",
								lease.Name, time.Since(lease.RequestedAt).Round(time.Millisecond), lease.TTL)
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
			t.Logf("%d connections killed: %d acquired, %d released, %d errors; %d acquires answered held by themselves, %d releases answered not held within the TTL (%d after it)",
				killed, acquired.Load(), released.Load(), errs.Load(), selfHeld.Load(), notHeld.Load(), expired.Load())
			if killed == 0 || acquired.Load() == 0 {
				t.Fatal("no connection was killed under load: the test proves nothing")
			}
			if selfHeld.Load() != 0 || notHeld.Load() != 0 {
				t.Fatalf("%d acquires found their own lock held and %d releases found their own lock gone: calls that ran twice",
					selfHeld.Load(), notHeld.Load())
			}
		})
	})
}

// Redis Cluster moves a slot's keys to another node one at a time
// (resharding), so for a moment a lock and its counter sit on two nodes
// and the acquire script, which needs both, is refused with TRYAGAIN: it
// did not run. A client gives up after a few quick redirects, and each
// such call reached the caller as an error. Moving the slot in use back
// and forth while locks are taken and released on it, no call may fail,
// and no token may go back. The unbatched and the batched run share one
// Cluster, one after the other, with keys of their own.
//
// A name's two keys may sit on two nodes for as long as the move of the
// slot's keys takes, during which its acquires are refused: a move took
// up to 2.7 s (0.97 s of MIGRATEs) under -race with this module's other
// tests on two cores. The TTL and the deadline outlast that by far, as a service's
// own must outlast its migrations: what is tested is that a refused call
// is sent again until it runs, not how soon a busy machine moves a slot.
func TestLockAcquireAndReleaseDoNotFailWhileTheirSlotMigrates(t *testing.T) {
	const ttl = 5 * time.Second
	eachClientLong(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t)
		client := k.cluster(t, cl)
		for _, b := range lockBatchings {
			t.Run(b.name, func(t *testing.T) {
				prefix := "reshard-" + b.name + ":"
				ctx := context.Background()
				l, err := lock.New(client, append([]lock.Option{lock.WithPrefix(prefix)}, b.opts...)...)
				if err != nil {
					t.Fatal(err)
				}
				// Names whose keys share one slot, so that every migration
				// moves them.
				slot := redistest.KeySlot(prefix + "{n0}")
				names := []string{"n0"}
				for i := 1; len(names) < 8; i++ {
					if n := "n" + strconv.Itoa(i); redistest.KeySlot(prefix+"{"+n+"}") == slot {
						names = append(names, n)
					}
				}
				var ok, failed atomic.Int64
				var last sync.Map // name → last token
				stop := make(chan struct{})
				var wg sync.WaitGroup
				for _, name := range names {
					for range 2 {
						wg.Go(func() {
							for {
								select {
								case <-stop:
									return
								default:
								}
								cctx, cancel := context.WithTimeout(ctx, 2*ttl)
								lease, err := l.AcquireWait(cctx, name, ttl)
								if err != nil {
									cancel()
									failed.Add(1)
									t.Logf("acquire %s: %v", name, err)
									continue
								}
								if prev, loaded := last.Swap(name, lease.Token); loaded && prev.(int64) >= lease.Token {
									t.Errorf("token %d after %d on %s", lease.Token, prev, name)
								}
								if _, err := l.Release(cctx, lease); err != nil {
									failed.Add(1)
									t.Logf("release %s: %v", name, err)
								} else {
									ok.Add(1)
								}
								cancel()
							}
						})
					}
				}
				const moves = 8
				var longest time.Duration
				for range moves {
					start := time.Now()
					cl.MoveSlot(t, prefix+"{n0}", time.Millisecond)
					longest = max(longest, time.Since(start))
				}
				close(stop)
				wg.Wait()
				t.Logf("%d migrations of slot %d (the longest took %v): %d acquire+release pairs, %d failed calls",
					moves, slot, longest.Round(time.Millisecond), ok.Load(), failed.Load())
				if ok.Load() == 0 {
					t.Fatal("no lock was taken during the migrations")
				}
				if failed.Load() != 0 {
					t.Fatalf("%d calls failed while their slot migrated", failed.Load())
				}
			})
		}
	})
}

// An Acquire sent to a frozen server times out, and the server runs it when
// it wakes: the name used to stay locked for a full TTL by a lease no
// caller held. The Locker now releases it by its own id once the server
// answers again, well before the TTL.
func TestLockAcquireThatTimedOutOnAFrozenServerDoesNotLeaveTheNameLocked(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		eachLockBatching(t, func(t *testing.T, opts []lock.Option) {
			s := redistest.Start(t, redistest.Own())
			l := newLockLocker(t, k.server(t, s), s, opts...)
			admin := s.Client(t)
			ctx := context.Background()
			const ttl = 10 * time.Second
			// Load the scripts: a first EVALSHA that times out never runs
			// anything, since the server answers it NOSCRIPT.
			if _, err := l.Release(ctx, mustLockAcquire(t, l, "other", ttl)); err != nil {
				t.Fatal(err)
			}

			s.Freeze(t)
			actx, cancel := context.WithTimeout(ctx, ttl/50)
			lease, err := l.Acquire(actx, "job", ttl)
			cancel()
			s.Thaw(t)
			if lease != nil || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("acquire on a frozen server: %v, %v; want a deadline", lease, err)
			}
			woke := time.Now()
			// The acquire ran after the thaw: it issued a token.
			lockWaitFor(t, ttl/4, "the timed-out acquire ran", func() bool {
				n, _ := admin.Exists(ctx, lockCounterKey(s, "job")).Result()
				return n == 1
			})
			lockWaitGone(t, l, "job", ttl/4)
			t.Logf("the name was free again %v after the thaw (TTL %v)", time.Since(woke).Round(time.Millisecond), ttl)
			mustLockAcquire(t, l, "job", ttl)
		})
	})
}

// The clean-up compares ids: it never releases another holder's lock.
func TestLockCleanupOfATimedOutAcquireLeavesTheHoldersLockAlone(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		eachLockBatching(t, func(t *testing.T, opts []lock.Option) {
			s := redistest.Start(t, redistest.Own())
			l := newLockLocker(t, k.server(t, s), s, opts...)
			ctx := context.Background()
			const ttl = 10 * time.Second
			held := mustLockAcquire(t, newLockLocker(t, k.server(t, s), s, opts...), "job", ttl)
			// Load the release script, so that each release is one EVALSHA.
			if _, err := l.Release(ctx, mustLockAcquire(t, l, "other", ttl)); err != nil {
				t.Fatal(err)
			}
			admin := s.Client(t)
			base := lockScriptCalls(t, admin)

			s.Freeze(t)
			actx, cancel := context.WithTimeout(ctx, ttl/50)
			_, err := l.Acquire(actx, "job", ttl)
			cancel()
			s.Thaw(t)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("acquire on a frozen server: %v; want a deadline", err)
			}
			// The acquire and the clean-up's two releases have run.
			lockWaitFor(t, ttl/4, "the clean-up ran", func() bool { return lockScriptCalls(t, admin) >= base+3 })
			h, err := l.Holder(ctx, "job")
			if err != nil || !h.Held || h.Token != held.Token {
				t.Fatalf("holder after the clean-up: %+v, %v; want token %d", h, err, held.Token)
			}
		})
	})
}

func TestLockAcquireAgainstFrozenRedisEndsWithTheContext(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		eachLockBatching(t, func(t *testing.T, opts []lock.Option) {
			s := redistest.Start(t, redistest.Own())
			l := newLockLocker(t, k.server(t, s), s, opts...)
			mustLockAcquire(t, l, "warm", time.Second) // a connection exists

			s.Freeze(t)
			defer s.Thaw(t)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := l.Acquire(ctx, "job", time.Second)
			took := time.Since(start)
			t.Logf("frozen: acquire returned after %v: %v", took, err)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("acquire against a frozen server: %v, want context.DeadlineExceeded", err)
			}
			if took > 300*time.Millisecond+time.Second {
				t.Fatalf("acquire took %v with a 300ms ctx", took)
			}
		})
	})
}

// A killed server refuses connections: a client that keeps dialling (go-redis
// redials a refused connection for ~1.7s by default) is bounded by the
// call's context. Restarted, the server is empty, and the client reaches it
// again: without persistence the counter is lost and tokens start over.
func TestLockAcquireFailsPromptlyWhenRedisIsKilledAndWorksAfterRestart(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		eachLockBatching(t, func(t *testing.T, opts []lock.Option) {
			s := redistest.Start(t, redistest.Own())
			l := newLockLocker(t, k.server(t, s), s, append([]lock.Option{lock.WithCounterTokens()}, opts...)...)
			lease := mustLockAcquire(t, l, "job", time.Minute)
			if lease.Token != 1 {
				t.Fatalf("token %d", lease.Token)
			}

			s.Kill(t)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := l.Acquire(ctx, "job", time.Second)
			took := time.Since(start)
			t.Logf("killed: acquire failed after %v: %v", took, err)
			if err == nil {
				t.Fatal("acquire against a killed server succeeded")
			}
			if took > 300*time.Millisecond+200*time.Millisecond {
				t.Fatalf("acquire took %v, want bounded by the 300ms ctx", took)
			}
			if _, err := l.Holder(ctx, "job"); err == nil {
				t.Fatal("holder against a killed server succeeded")
			}
			if _, err := l.Release(ctx, lease); err == nil {
				t.Fatal("release against a killed server succeeded")
			}

			s.Restart(t) // comes back empty: no persistence
			lockWaitFor(t, 5*time.Second, "acquire works after restart", func() bool {
				_, err := l.Acquire(context.Background(), "job", time.Second)
				return err == nil
			})
			// The counter did not survive the restart: tokens start over.
			// This is the failure Preflight warns about.
			h, err := l.Holder(context.Background(), "job")
			if err != nil || h.Token != 1 {
				t.Fatalf("holder after restart = %+v, %v; want token 1 reissued", h, err)
			}
		})
	})
}

// A frozen server answers nothing for a third of the TTL. The Keeper's
// renewals block or fail meanwhile (a short read timeout turns the outage
// into errors the Keeper must retry through, rather than one renewal that
// blocks across it); once the server is back a renewal gets through before
// the deadline, and the lease is still the holder's.
func TestLockKeeperRidesOutAnOutageShorterThanTheDeadline(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		eachLockBatching(t, func(t *testing.T, opts []lock.Option) {
			s := redistest.Start(t, redistest.Own())
			l := newLockLocker(t, k.client(t, target{addrs: []string{s.Addr()}, timeout: 50 * time.Millisecond}), s, opts...)
			other := newLockLocker(t, k.server(t, s), s, opts...)
			const ttl = 600 * time.Millisecond
			lease := mustLockAcquire(t, l, "job", ttl)
			keeper, err := l.Keep(context.Background(), lease, ttl/6)
			if err != nil {
				t.Fatal(err)
			}
			defer keeper.Stop()

			time.Sleep(ttl / 4) // a renewal or two
			s.Freeze(t)
			time.Sleep(ttl / 3) // the outage: renewals block or fail
			s.Thaw(t)
			// Well past the lease's original expiry, the lease must still be
			// ours.
			time.Sleep(ttl)
			if err := keeper.Context().Err(); err != nil {
				t.Fatalf("keeper gave up on a %v outage with a %v lease: %v", ttl/3, ttl, context.Cause(keeper.Context()))
			}
			_, err = other.Acquire(context.Background(), "job", ttl)
			var held *lock.HeldError
			if !errors.As(err, &held) || held.Token != lease.Token {
				t.Fatalf("after the outage another acquire got %v; want held by token %d", err, lease.Token)
			}
			renewed := keeper.Lease()
			if !renewed.RequestedAt.After(lease.RequestedAt) || renewed.Token != lease.Token {
				t.Fatalf("Keeper.Lease() = %+v, not renewed", renewed)
			}
			if !keeper.Deadline().After(time.Now()) {
				t.Fatalf("deadline %v is past", keeper.Deadline())
			}
			if err := keeper.Stop(); err != nil {
				t.Fatalf("stop: %v", err)
			}
			if ok, err := l.Release(context.Background(), lease); err != nil || !ok {
				t.Fatalf("release after Stop: %v, %v", ok, err)
			}
		})
	})
}

func TestLockAcquireWaitWakesWithinMillisecondsOfARelease(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		s := redistest.Start(t, redistest.Own()) // commandstats must count only this test
		raw := s.Client(t)
		holder := newLockLocker(t, k.server(t, s), s, lock.WithCounterTokens())
		// A fallback this slow cannot be what wakes the waiter: only the
		// release notification can, and the holder's 30s lease is nowhere
		// near expiry.
		waiter := newLockLocker(t, k.server(t, s), s, lock.WithCounterTokens(), lock.WithWaitBackoff(10*time.Second, 10*time.Second))

		const rounds = 20
		var latencies []time.Duration
		for round := range rounds {
			lease := mustLockAcquire(t, holder, "job", 30*time.Second)
			before := lockScriptCalls(t, raw)
			var (
				got  *lock.Lease
				err  error
				woke time.Time
				wg   sync.WaitGroup
			)
			wg.Go(func() {
				got, err = waiter.AcquireWait(context.Background(), "job", 10*time.Second)
				woke = time.Now()
			})
			// The waiter is asleep once it has subscribed and made its
			// attempt after the subscription's confirmation: two acquires in
			// all.
			lockWaitFor(t, 5*time.Second, "the waiter subscribed and was refused twice", func() bool {
				return lockSubscribers(t, raw, s, "job") == 1 && lockScriptCalls(t, raw) >= before+2
			})
			sent := time.Now()
			if ok, rerr := holder.Release(context.Background(), lease); rerr != nil || !ok {
				t.Fatalf("release: %v, %v", ok, rerr)
			}
			wg.Wait()
			if err != nil {
				t.Fatalf("round %d: AcquireWait: %v", round, err)
			}
			if got.Token != lease.Token+1 {
				t.Fatalf("round %d: waiter got token %d, want %d", round, got.Token, lease.Token+1)
			}
			latencies = append(latencies, woke.Sub(sent))
			if ok, rerr := waiter.Release(context.Background(), got); rerr != nil || !ok {
				t.Fatalf("release: %v, %v", ok, rerr)
			}
			lockWaitFor(t, 2*time.Second, "the waiter's subscription ended", func() bool {
				return lockSubscribers(t, raw, s, "job") == 0
			})
		}
		slices.Sort(latencies)
		median, worst := latencies[rounds/2], latencies[rounds-1]
		t.Logf("wake-up after release (release sent -> waiter holds the lock), %d rounds: min %v, median %v, max %v",
			rounds, latencies[0], median, worst)
		// Loopback, two busy cores, -race: a few milliseconds is the honest
		// expectation; the fallback would take 5-10s.
		if median > 20*time.Millisecond || worst > 250*time.Millisecond {
			t.Fatalf("wake-up median %v, max %v: want a few milliseconds", median, worst)
		}
	})
}

func TestLockAcquireWaitEndsWithItsContextAndLeavesNoSubscription(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		s := redistest.Start(t)
		raw := s.Client(t)
		holder, waiter := newLockLocker(t, k.server(t, s), s), newLockLocker(t, k.server(t, s), s)
		mustLockAcquire(t, holder, "job", 30*time.Second)

		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := waiter.AcquireWait(ctx, "job", time.Second)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("AcquireWait past its ctx: %v, want context.DeadlineExceeded", err)
		}
		if took := time.Since(start); took > 200*time.Millisecond+100*time.Millisecond {
			t.Fatalf("returned %v after a 200ms ctx", took)
		}
		lockWaitFor(t, 2*time.Second, "subscription gone", func() bool { return lockSubscribers(t, raw, s, "job") == 0 })

		// A cancelled (not timed-out) context too.
		ctx, cancel = context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		if _, err := waiter.AcquireWait(ctx, "job", time.Second); !errors.Is(err, context.Canceled) {
			t.Fatalf("AcquireWait cancelled: %v, want context.Canceled", err)
		}
	})
}

// WAIT counts the replicas that have the writes made on its own
// connection. When the client sends the acquire and its WAIT again on a new
// connection (the first died under the WAIT), the acquire script finds the
// lock holding this acquisition's own value and writes nothing. Were the
// resent WAIT to count against that connection's writes alone, it would
// answer at once with every replica the primary counts online, including
// one that never got the lock: a lease "acknowledged" by a replica that
// lacks it, lost in a failover to that replica while its holder counts on
// it (one of the paths issue 25 suspected of escaping the WAIT). Here the
// replica is cut off, the connection is killed under the WAIT, and the
// client resends with its default options: the resent WAIT must wait, and
// the acquire fail closed. (On Redis 7.0 it does: the resent WAIT runs its
// whole timeout.)
func TestLockRetriedAcquireDoesNotCountAReplicaThatMissedTheLock(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		s := redistest.Start(t, redistest.Own())
		r := s.StartReplica(t)
		const timeout = 2 * time.Second
		l := newLockLocker(t, k.server(t, s), s, lock.WithReplicas(1, timeout, true))
		plain := newLockLocker(t, k.server(t, s), s)
		// A deadline, so that a client that resends a call only within one
		// (luascripts.Client's contract allows it) resends this one.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()

		r.Partition(t)
		type result struct {
			lease *lock.Lease
			err   error
		}
		got := make(chan result, 1)
		go func() {
			lease, err := l.Acquire(ctx, "job", 10*time.Second)
			got <- result{lease, err}
		}()
		// The acquire took the lock and waits for the replica.
		lockWaitFor(t, timeout/2, "the acquire to take the lock", func() bool {
			h, err := plain.Holder(ctx, "job")
			return err == nil && h.Held
		})
		admin := s.Client(t, func(o *redis.Options) { o.PoolSize = 1 })
		killed, err := admin.ClientKillByFilter(ctx, "TYPE", "normal", "SKIPME", "yes").Result()
		if err != nil {
			t.Fatal(err)
		}
		killedAt := time.Now()
		res := <-got
		afterKill := time.Since(killedAt)
		onReplica, rerr := r.Client(t).Exists(ctx, lockKey(s, "job")).Result()
		r.Heal(t)
		t.Logf("killed %d connections under the WAIT; the retried acquire returned %v later: lease %+v, %v; the lock on the replica: %d (%v)",
			killed, afterKill.Round(time.Millisecond), res.lease, res.err, onReplica, rerr)
		if killed < 1 {
			t.Fatal("no connection killed")
		}
		if res.err == nil && onReplica == 0 {
			t.Fatalf("a lease counted as acknowledged by %d replica(s) while the replica lacks the lock", res.lease.Replicas)
		}
		if !errors.Is(res.err, lock.ErrNotReplicated) {
			t.Fatalf("acquire: %v, want ErrNotReplicated: the replica, cut off, never had the lock", res.err)
		}
		if afterKill < timeout {
			t.Fatalf("the retried WAIT gave up %v after the kill, before its %v timeout", afterKill, timeout)
		}
		if h, err := plain.Holder(ctx, "job"); err != nil || h.Held {
			t.Fatalf("holder after failing closed: %+v, %v; want released", h, err)
		}
	})
}

// A Sentinel failover promotes a replica that may have missed the last
// acquisitions: with counter-only tokens its counter is behind, and the
// first leases it hands out reissue tokens already given to holders; a
// token scheme that follows the server's clock must issue every lease after
// the failover a token above every lease before it. For each fault: (a)
// SENTINEL FAILOVER, (b) the primary SIGKILLed, (c) the primary frozen past
// down-after-milliseconds and thawed (demoted, losing what it ran since).
// The acquirers' clients must follow each failover to the new primary.
//
// WithReplicas(2) (both replicas, fail closed) composes with either scheme:
// no token is reissued, and no lease begins while another holder counts on
// its own within its deadline. About one lease in 50 to 100 after a fault
// did, until Acquire stopped returning a lease whose WAIT outlasted its TTL
// (lock's TestAcquireWhoseReplicaAcknowledgedAfterTheTTLReturnsNoLease);
// the few left after that were a holder that released a lease past its
// deadline, counted by the measure as still held
// (TestLockOverlapCountIgnoresALeaseItsHolderKeptPastItsDeadline), and are
// now printed apart. A replica that was cut off, or fewer replicas
// acknowledged than could be promoted, and the lock vanishes; then two
// holders for up to one TTL, and only the fence, refusing the older once
// the newer writes, keeps the resource right (package fence's
// TestWithReplicasLeaseVanishesWhenSentinelPromotesAReplicaThatMissedIt).
// These holders never renew; renewals under WithReplicas are pinned by
// lock's TestWithReplicasExtensionAPromotedReplicaMissedIsNotCountedOn.
func TestLockSentinelFailoverReissuesTokensUnlessTheyFollowTheServerClock(t *testing.T) {
	eachClientLong(t, func(t *testing.T, k kind) {
		sen := redistest.StartSentinel(t)
		type variant struct {
			name      string
			monotonic bool
			// replicated: every lease waited for both replicas
			// (WithReplicas, fail closed), so whichever replica is promoted
			// has it.
			replicated bool
			a          *lockAcquirers
		}
		var all []variant
		for i, sc := range lockTokenSchemes() {
			all = append(all,
				variant{name: sc.name + " tokens", monotonic: sc.monotonic,
					a: startLockAcquirers(t, k, sen, sc.opts, fmt.Sprintf("s%d:", i), 4)},
				variant{name: sc.name + " tokens, WithReplicas(2)", monotonic: sc.monotonic, replicated: true,
					a: startLockAcquirers(t, k, sen, append([]lock.Option{lock.WithReplicas(2, 100*time.Millisecond, true)}, sc.opts...),
						fmt.Sprintf("s%dr:", i), 4)})
		}
		faults := []struct {
			name string
			do   func(testing.TB) redistest.Failover
		}{
			{"SENTINEL FAILOVER", sen.Failover},
			{"SIGKILL", sen.KillPrimary},
			{"SIGSTOP past down-after", sen.FreezePrimary},
		}
		var replicatedLeases, replicatedOverlaps, replicatedPast int
		for _, f := range faults {
			t.Run(f.name, func(t *testing.T) {
				// Leases are being handed out before the fault and after it.
				for _, v := range all {
					n := v.a.count()
					lockWaitFor(t, 10*redistest.SentinelFailoverTimeout, "leases before the fault", func() bool { return v.a.count() >= n+20 })
				}
				from := time.Now()
				fo := f.do(t)
				settled := time.Since(from)
				for _, v := range all {
					// Leases keep coming after the failover: the first ones
					// from the new primary are those that may reuse a token.
					n := v.a.count()
					lockWaitFor(t, 10*redistest.SentinelFailoverTimeout, "leases after the failover", func() bool { return v.a.count() >= n+20 })
					reissued, highest, counted := v.a.reissued(from)
					overlaps, past := v.a.overlapping(from)
					t.Logf("%s, %s: primary moved in %v, settled in %v; highest token before the fault %d; of the %d leases since the fault began, %d reissued a token, %d began while another holder counted on its lease within its deadline, and %d more only while a holder kept its lease past its deadline",
						f.name, v.name, fo.Took.Round(time.Millisecond), settled.Round(time.Millisecond), highest, counted, reissued, overlaps, past)
					if (v.monotonic || v.replicated) && reissued > 0 {
						t.Errorf("%s: %d leases reissued a token", v.name, reissued)
					}
					if v.replicated {
						replicatedLeases += counted
						replicatedOverlaps += overlaps
						replicatedPast += past
					}
				}
			})
		}
		t.Logf("WithReplicas(2): of %d leases since the faults began, %d began while another holder counted on its lease within its deadline; %d more began while a holder kept its lease past its deadline",
			replicatedLeases, replicatedOverlaps, replicatedPast)
		if replicatedOverlaps > 0 {
			t.Errorf("WithReplicas(2): %d of %d leases since the faults began while another holder counted on its lease within its deadline, want 0",
				replicatedOverlaps, replicatedLeases)
		}
	})
}

// The WithReplicas overlaps the Sentinel test used to report (about one
// lease in 200 to 400 after lock's
// TestAcquireWhoseReplicaAcknowledgedAfterTheTTLReturnsNoLease) were not two
// holders. The sequence, from a run's log (times from the first acquire's
// send): a 73ms lease whose WAIT took 66ms was returned past the test's own
// deadline for it (65.7ms: the TTL less a tenth), and its holder, pausing a
// random part of the TTL before releasing, sent the release at 88ms. The
// lock had expired on the server at 73.3ms (token time 0.3ms + TTL) and
// another holder took it at 77ms: after the first lease ended. The measure
// took the release as the end of the first holder's claim, so it counted an
// overlap. A holder's claim ends at its deadline at the latest; a real
// overlap, one lease returned before another's deadline, is still counted.
// It tests the Sentinel test's measure, on no client.
func TestLockOverlapCountIgnoresALeaseItsHolderKeptPastItsDeadline(t *testing.T) {
	t0 := time.Now()
	at := func(us int) time.Time { return t0.Add(time.Duration(us) * time.Microsecond) }
	past := []lockAcquisition{
		{token: 1, sent: at(0), got: at(66_077), deadline: at(65_736), released: at(87_918)},
		{token: 2, sent: at(77_284), got: at(78_177), deadline: at(77_300 + 203_400), released: at(110_000)},
	}
	overlaps, pastDeadline := countLockOverlaps(past, t0)
	t.Logf("a lease released past its deadline, the next one taken after it expired: %d overlaps, %d after a lease kept past its deadline", overlaps, pastDeadline)
	if overlaps != 0 || pastDeadline != 1 {
		t.Errorf("counted %d overlaps and %d after a lease kept past its deadline, want 0 and 1", overlaps, pastDeadline)
	}
	real := []lockAcquisition{
		{token: 1, sent: at(0), got: at(1_000), deadline: at(90_000)},                                 // left to expire
		{token: 2, sent: at(40_000), got: at(50_000), deadline: at(130_000)},                          // within the first's deadline
		{token: 3, sent: at(140_000), got: at(141_000), deadline: at(200_000), released: at(150_000)}, // after both
		{token: 4, sent: at(145_000), got: at(146_000), deadline: at(220_000)},                        // before the third's release
	}
	overlaps, pastDeadline = countLockOverlaps(real, t0)
	if overlaps != 2 || pastDeadline != 0 {
		t.Errorf("counted %d overlaps and %d after a lease kept past its deadline, want 2 (the second and fourth leases) and 0", overlaps, pastDeadline)
	}
}
