package clienttest_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
)

// ratelimit's tests whose outcome depends on the client: killed
// connections, a frozen server or a stalled link, a Cluster's routing,
// batching and slot migrations. Each runs on every kind, in a subtest per
// kind with its own server (eachClient), unbatched and batched where
// batching changes how the calls are sent. Their helpers are in
// ratelimit_helpers_test.go.

// A client sends a command again, and a whole pipeline again, when the
// connection fails before the reply is read (go-redis: MaxRetries, 3 by
// default). A script that ran before the connection dropped then runs
// twice, and a caller told "admitted once" has been charged twice. With
// the client's default options and connections killed under load, what
// the server counted must lie between what callers were told was admitted
// and that plus the calls that returned an error (each of those may or
// may not have been decided).
func TestRateLimitEveryCallIsCountedOnceWhenTheClientResendsItAfterAKilledConnection(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		for _, pass := range []struct {
			name  string
			batch int
		}{{"unbatched", 0}, {"batched", 64}} {
			t.Run(pass.name, func(t *testing.T) {
				name := pass.name
				s := redistest.Start(t, redistest.Own())
				rdb := s.Client(t)
				l := rateLimitNew(t, k.server(t, s), rateLimitOpts(s.Prefix()+"rl:", pass.batch)...)
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

				// A deadline, so that the first read after the kills is sent
				// again on a new connection by a client that resends only
				// within one, as go-redis resends it.
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				counted := int64(0)
				for i := range keys {
					n, err := rdb.ZCard(rctx, s.Prefix()+"rl:{"+key(i)+"}:l1000000:1h").Result()
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
	})
}

// A client sends a command again after its connection fails. A settle is
// sent again (settle.lua knows its own earlier run by the id), and a
// caller retries a Commit that returned an error: with connections killed
// under load and the client's default options, what the limits count must
// lie between the commits callers saw succeed and that plus what the
// reservations whose Reserve or Commit failed may hold, and the log and
// GCRA, charged and given back alike, must agree: GCRA would count a
// settle given back twice as fewer; both, a Reserve run twice as more.
func TestRateLimitCommitsResentAfterKilledConnectionsChargeOnce(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		for _, pass := range rateLimitPasses {
			t.Run(pass.name, func(t *testing.T) {
				s := redistest.Start(t, redistest.Own())
				rdb := s.Client(t)
				l := rateLimitNew(t, k.server(t, s), rateLimitOpts(s.Prefix()+"rl:", pass.batch)...)
				logLim, gcraLim := ratelimit.SlidingLog(1_000_000, time.Hour), ratelimit.GCRA(1000, time.Hour, 1_000_000)
				p := ratelimit.Policy{logLim, gcraLim}
				ctx := context.Background()
				if _, err := l.Peek(ctx, "k", p); err != nil {
					t.Fatal(err)
				}
				var committed, unsure, settles, retries atomic.Int64
				stop := make(chan struct{})
				var wg sync.WaitGroup
				for range 32 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							select {
							case <-stop:
								return
							default:
							}
							rs, err := l.Reserve(ctx, "k", p, 3, time.Hour)
							if err != nil {
								unsure.Add(3) // it may hold its 3 until the TTL
								continue
							}
							for try := 0; ; try++ {
								_, err := rs.Commit(ctx, 1)
								if err == nil || errors.Is(err, ratelimit.ErrSettled) {
									committed.Add(1)
									settles.Add(1)
									retries.Add(int64(try))
									break
								}
								if try == 20 {
									unsure.Add(3)
									break
								}
							}
						}
					}()
				}
				kill := s.KillClients(t, 3*time.Millisecond)
				time.Sleep(1500 * time.Millisecond)
				close(stop)
				wg.Wait()
				killed := kill()
				// A deadline, so that the first reads after the kills are
				// sent again on a new connection by a client that resends
				// only within one, as go-redis resends them.
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				logCount, err := rdb.ZCard(rctx, s.Prefix()+"rl:{k}:l1000000:1h").Result()
				if err != nil {
					t.Fatal(err)
				}
				res, err := l.Peek(rctx, "k", p)
				if err != nil {
					t.Fatal(err)
				}
				gcraUsed := int64(gcraLim.Burst() - res.Each[1].Remaining) // drains under 1 in the run
				a, u := committed.Load(), unsure.Load()
				t.Logf("%d connections killed; %d commits succeeded after %d retries, %d units unsure; the log counts %d, GCRA %d",
					killed, a, retries.Load(), u, logCount, gcraUsed)
				if killed == 0 || a == 0 {
					t.Fatal("no connection was killed under load: the test proves nothing")
				}
				// Both limits are charged and given back the same units: a
				// settle given back twice would part them.
				if d := logCount - gcraUsed; d < -1 || d > 1 {
					t.Errorf("the log counts %d and GCRA %d: a give-back was applied twice to one of them", logCount, gcraUsed)
				}
				for name, n := range map[string]int64{"log": logCount, "gcra": gcraUsed} {
					if n < a-1 || n > a+u+1 {
						t.Errorf("%s counts %d: outside [%d committed, + %d unsure]", name, n, a, u)
					}
				}
			})
		}
	})
}

// A call sent to a frozen server times out, and the server runs it when it
// wakes: the caller got context.DeadlineExceeded, and the request was
// counted all the same. A timeout does not mean "not consumed".
func TestRateLimitAllowThatTimedOutOnAFrozenServerStillConsumesQuotaOnceItWakes(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		for _, pass := range rateLimitPasses {
			t.Run(pass.name, func(t *testing.T) {
				s := redistest.Start(t, redistest.Own())
				l := rateLimitNew(t, k.server(t, s), rateLimitOpts(s.Prefix()+"rl:", pass.batch)...)
				ctx := context.Background()
				const window = 10 * time.Second
				for name, lim := range rateLimitAlgorithms(5, window) {
					key := "user:" + name
					// Load the scripts: a first EVALSHA that times out runs nothing.
					if err := l.Reset(ctx, key, lim); err != nil {
						t.Fatal(err)
					}
					if _, err := l.Peek(ctx, key, lim); err != nil {
						t.Fatal(err)
					}
					if _, err := l.AllowN(ctx, "warm:"+name, lim, 1); err != nil {
						t.Fatal(err)
					}
					s.Freeze(t)
					actx, cancel := context.WithTimeout(ctx, window/100)
					_, err := l.AllowN(actx, key, lim, 2)
					cancel()
					s.Thaw(t)
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("%s: allow on a frozen server: %v; want a deadline", name, err)
					}
					var res ratelimit.Result
					deadline := time.Now().Add(window / 4)
					for {
						if res, err = l.Peek(ctx, key, lim); err != nil {
							t.Fatal(err)
						}
						if res.Remaining == 3 || time.Now().After(deadline) {
							break
						}
						time.Sleep(2 * time.Millisecond)
					}
					if res.Remaining != 3 {
						t.Fatalf("%s: remaining %d after a timed-out AllowN(2) of 5; want 3: the call ran when the server woke", name, res.Remaining)
					}
					t.Logf("%s: the timed-out AllowN(2) consumed 2 of 5", name)
				}
			})
		}
	})
}

// The middleware's Timeout bounds a decision on a frozen server: it
// answers after the Timeout, failing open or closed, and no later.
func TestRateLimitHTTPRateMiddlewareAnswersWithinTheTimeoutWhenRedisIsFrozen(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		const timeout = 150 * time.Millisecond
		for _, failClosed := range []bool{false, true} {
			name := map[bool]string{false: "fail-open", true: "fail-closed"}[failClosed]
			t.Run(name, func(t *testing.T) {
				s := redistest.Start(t, redistest.Own())
				// The kind's client honours the context's deadline on the
				// socket (go-redis: ContextTimeoutEnabled; without it, it
				// waits out ReadTimeout, measured: 5s).
				sv := rateLimitServe(t, rateLimitNew(t, k.server(t, s), ratelimit.WithPrefix(s.Prefix()+"rl:")), httprate.Config{
					Policy:     ratelimit.Policy{ratelimit.SlidingLog(100, time.Minute)},
					Timeout:    timeout,
					FailClosed: failClosed,
				})
				if resp, _ := rateLimitGet(t, sv.srv.URL); resp.StatusCode != http.StatusOK {
					t.Fatalf("before the freeze: %s", resp.Status)
				}
				s.Freeze(t)
				t.Cleanup(func() { s.Thaw(t) }) // before the fixture kills it
				start := time.Now()
				resp, body := rateLimitGet(t, sv.srv.URL)
				took := time.Since(start)
				t.Logf("%s with Redis frozen: %s after %v (timeout %v)", name, resp.Status, took, timeout)
				// It waited for Redis as long as allowed and no longer: slack
				// for a loaded machine running -race, not for a second attempt.
				if took < timeout || took > timeout+350*time.Millisecond {
					t.Fatalf("answered after %v, want within [%v, %v]", took, timeout, timeout+350*time.Millisecond)
				}
				err, _ := sv.errs.Load().(error)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Hook got %v, want a deadline error", err)
				}
				switch failClosed {
				case false:
					if resp.StatusCode != http.StatusOK || string(body) != "ok" || resp.Header.Get("RateLimit") != "" {
						t.Fatalf("fail-open: %s %q RateLimit=%q; want the handler's 200 without rate-limit fields", resp.Status, body, resp.Header.Get("RateLimit"))
					}
				case true:
					if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Content-Type") != "application/problem+json" {
						t.Fatalf("fail-closed: %s %s, want 503 problem+json", resp.Status, resp.Header.Get("Content-Type"))
					}
					if n := sv.calls.Load(); n != 1 {
						t.Fatalf("fail-closed ran the handler %d times, want only the request before the freeze", n)
					}
				}
			})
		}
	})
}

// A call's deadline is its own, whoever sends its batch. With the link
// stalled under a batch in flight (a Peek, L, deadline D):
//   - F2 (deadline D−500ms) waits for the lane and ends first: not sent;
//   - L ends at D, its own deadline;
//   - F3 (D+300ms) and F1 (D+10s) go in the next batch, which F1, the
//     later deadline, sends; F3 ends at its deadline while it is in
//     flight (sent: its request is decided when the link resumes);
//   - F1 is admitted once the link resumes.
//
// So the key ends with exactly two requests consumed: F1's and F3's.
func TestRateLimitBatchingHonoursEachCallsDeadlineWhileItsBatchWaits(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		s := redistest.Start(t)
		relay := redistest.StartRelay(t, s.Addr())
		client := &rateLimitCalls{Client: k.client(t, target{addrs: []string{relay.Addr()}}), started: make(chan struct{}, 1)}
		l := rateLimitNew(t, client, ratelimit.WithPrefix(s.Prefix()+"rl:"), ratelimit.WithBatching(16))
		lim := ratelimit.SlidingCounter(10, time.Hour)
		if _, err := l.Peek(context.Background(), "k", lim); err != nil { // loads the script, opens a connection
			t.Fatal(err)
		}
		<-client.started

		type result struct {
			res ratelimit.Result
			err error
		}
		call := func(deadline time.Time, peek bool) chan result {
			ch := make(chan result, 1)
			go func() {
				ctx, cancel := context.WithDeadline(context.Background(), deadline)
				defer cancel()
				var r result
				if peek {
					r.res, r.err = l.Peek(ctx, "k", lim)
				} else {
					r.res, r.err = l.Allow(ctx, "k", lim)
				}
				ch <- r
			}()
			return ch
		}
		relay.Stall()
		d := time.Now().Add(time.Second)
		lead := call(d, true)
		<-client.started // L's batch is in flight, held by the relay
		f1 := call(d.Add(10*time.Second), false)
		f3 := call(d.Add(300*time.Millisecond), false)
		f2 := call(d.Add(-500*time.Millisecond), false)

		r := <-f2
		if !errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("F2: %v, want its deadline exceeded", r.err)
		}
		select {
		case r := <-lead:
			t.Fatalf("L returned (%v) before F2's earlier deadline let F2 go", r.err)
		default:
		}
		if r := <-lead; !errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("L: %v, want its deadline exceeded", r.err)
		}
		if r := <-f3; !errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("F3: %v, want its deadline exceeded", r.err)
		}
		relay.Resume()
		if r := <-f1; r.err != nil || !r.res.Allowed {
			t.Fatalf("F1: allowed %v, %v; want admitted after the link resumed", r.res.Allowed, r.err)
		}
		res, err := l.Peek(context.Background(), "k", lim)
		if err != nil {
			t.Fatal(err)
		}
		if res.Remaining != 8 {
			t.Fatalf("remaining %d after F1 and F3, want 8: F2, which never left the queue, must not count", res.Remaining)
		}
	})
}

// Keys come from users (API keys, e-mail addresses) and may hold braces.
// Every key of one decision must still sit in one Cluster slot, or a real
// cluster node answers CROSSSLOT, and distinct user keys must keep distinct
// limits.
func TestRateLimitKeysWithBracesStayInOneSlotAndApartOnACluster(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t) // the test's own cluster: no prefix needed to keep it apart
		l := rateLimitNew(t, k.cluster(t, cl), ratelimit.WithPrefix("rl:"))
		ctx := context.Background()
		policy := ratelimit.Policy{ratelimit.SlidingLog(2, time.Minute), ratelimit.GCRA(2, time.Minute, 2), ratelimit.SlidingCounter(2, time.Minute)}
		keys := []string{"plain", "a}b", "{x}", "user{7}", "}", "{", "a}:meta", "%7D", "%"}
		for _, key := range keys {
			for i := 0; i < 2; i++ {
				res, err := l.Allow(ctx, key, policy)
				if err != nil {
					t.Fatalf("allow %q on a cluster: %v", key, err)
				}
				if !res.Allowed {
					t.Fatalf("key %q request %d denied: another key's requests were counted against it", key, i+1)
				}
			}
			res, err := l.Allow(ctx, key, policy)
			if err != nil || res.Allowed {
				t.Fatalf("key %q third request: allowed=%v, %v; want denied", key, res.Allowed, err)
			}
			if _, err := l.Peek(ctx, key, policy); err != nil {
				t.Fatalf("peek %q on a cluster: %v", key, err)
			}
			if err := rateLimitReservationPaths(ctx, l, key, policy, time.Minute); err != nil {
				t.Fatalf("reservations on %q on a cluster: %v", key, err)
			}
		}
	})
}

// Batching on Redis Cluster: a batch is split by node, each decision's
// keys stay in one slot.
func TestRateLimitBatchingOnAClusterAdmitsExactlyTheLimit(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t) // the test's own cluster: no prefix needed to keep it apart
		l := rateLimitNew(t, k.cluster(t, cl), ratelimit.WithPrefix("rl:"), ratelimit.WithBatching(16))
		policy := ratelimit.Policy{ratelimit.SlidingLog(7, time.Minute), ratelimit.GCRA(7, time.Minute, 7), ratelimit.SlidingCounter(7, time.Minute)}
		keys := []string{"plain", "a}b", "{x}", "user{7}"}
		got := rateLimitTogether(t, 100, func(i int) (bool, error) {
			res, err := l.Allow(context.Background(), keys[i%len(keys)], policy)
			return res.Allowed, err
		})
		if got != 7*len(keys) {
			t.Fatalf("%d admitted over %d keys, want exactly %d", got, len(keys), 7*len(keys))
		}
	})
}

// On a Cluster a batch's decisions are one script call per primary: no
// round may carry two batch.lua calls for one node, and the primaries
// together must have run far fewer script calls than there were
// decisions; and no key may be admitted over its limit. A client that
// cannot tell which primary serves a key (Primary's ErrNoRoute) sends
// each decision as its own call instead, and no batch.lua call at all.
func TestRateLimitBatchedDecisionsAreOneScriptCallPerNodeOnACluster(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t)
		client := &rateLimitCalls{Client: k.cluster(t, cl)}
		l := rateLimitNew(t, client, ratelimit.WithPrefix("rl:"), ratelimit.WithBatching(64))
		ctx := context.Background()
		routes := rateLimitRoutes(ctx, client)
		// batch.lua is loaded by the first batch each primary gets
		// (NOSCRIPT, then EVAL): a few script calls more, well within the
		// margins below.
		var primaries []*redis.Client
		for _, n := range cl.Nodes() {
			c := n.Client(t)
			if info, err := c.Info(ctx, "replication").Result(); err != nil {
				t.Fatal(err)
			} else if strings.Contains(info, "role:master") {
				primaries = append(primaries, c)
			}
		}
		const limit = 50
		rule := ratelimit.Policy{ratelimit.SlidingLog(limit, time.Hour), ratelimit.GCRA(1_000_000, time.Second, 1_000_000)}
		for i := range 300 { // loads the per-decision script on every primary
			if _, err := l.Allow(ctx, "warm"+strconv.Itoa(i), rule); err != nil {
				t.Fatal(err)
			}
		}
		client.reset()
		var before int64
		for _, c := range primaries {
			before += rateLimitScriptCalls(t, c)
		}
		stop := make(chan struct{})
		o, wait := rateLimitHammer(l, 100, func(g, i int) string { return "u" + strconv.Itoa((g*7919+i)%500) }, rule, stop)
		time.Sleep(1500 * time.Millisecond)
		close(stop)
		wait()
		var ran int64
		for _, c := range primaries {
			ran += rateLimitScriptCalls(t, c)
		}
		ran -= before
		rounds, calls, batched, two := client.seen()
		decisions := o.calls.Load()
		t.Logf("%d decisions in %d rounds on %d primaries; they ran %d script calls, %d of them batch.lua carrying %d decisions (the client routes: %v)",
			decisions, rounds, len(primaries), ran, calls, batched, routes)
		if o.failed.Load() != 0 || o.lost.Load() != 0 {
			t.Fatalf("%d calls failed (%v), %d lost", o.failed.Load(), o.first, o.lost.Load())
		}
		if two != 0 {
			t.Fatalf("%d rounds carried two batch.lua calls for one node", two)
		}
		switch {
		case !routes && calls != 0:
			t.Fatalf("%d batch.lua calls on a client that cannot tell which primary serves a key: want each decision its own call", calls)
		case routes && (ran*3 > decisions || int64(batched)*2 < decisions):
			t.Fatalf("%d script calls for %d decisions, %d of them batched: want most decisions batched, several per call", ran, decisions, batched)
		}
		for key, n := range o.admitted {
			if n > limit {
				t.Fatalf("key %s: %d admitted, over its limit of %d", key, n, limit)
			}
		}
	})
}

// A batch.lua call carries keys of several slots, all the node's; while
// one of them moves to another node, a call may reach a node that no
// longer has, or does not yet have, some of its keys. It must then fall
// back to the decisions one by one, before writing anything: moving the
// slot in use back and forth under batched decisions on keys of that slot
// and of others, no call may fail, no key may be admitted over its limit,
// and the server must count exactly what callers were told was admitted
// (a write on the wrong node would also make the move fail: BUSYKEY). On
// a client that cannot tell which primary serves a key, the batches'
// decisions are each their own call, and must survive the moves alike.
func TestRateLimitBatchedDecisionsSurviveTheirSlotMovingWithoutOverAdmitting(t *testing.T) {
	eachClientLong(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t)
		rdb := cl.Client(t)
		client := &rateLimitCalls{Client: k.cluster(t, cl)}
		ctx := context.Background()
		routes := rateLimitRoutes(ctx, client)
		slot := redistest.KeySlot("{u0}")
		var users []string // 8 of the moved slot, then 24 of others
		other := 0
		for i := 0; len(users) < 32; i++ {
			u := "u" + strconv.Itoa(i)
			s := redistest.KeySlot("{" + u + "}")
			if s == slot && len(users)-other < 8 {
				users = append(users, u)
			} else if s != slot && other < 24 && len(users) >= 8 {
				users = append(users, u)
				other++
			}
		}
		const limit = 300
		log := ratelimit.SlidingLog(limit, time.Hour) // its members count what was admitted
		rule := ratelimit.Policy{ratelimit.GCRA(1_000_000, time.Second, 1_000_000), log}
		l := rateLimitNew(t, client, ratelimit.WithPrefix("mv:"), ratelimit.WithBatching(64))
		stop := make(chan struct{})
		o, wait := rateLimitHammer(l, 64, func(g, i int) string { return users[(g+i)%len(users)] }, rule, stop)
		const moves = 6
		for range moves {
			cl.MoveSlot(t, "{u0}", time.Millisecond)
		}
		close(stop)
		wait()
		_, calls, batched, _ := client.seen()
		counted, admitted := int64(0), int64(0)
		for _, u := range users {
			n, err := rdb.ZCard(ctx, "mv:{"+u+"}:l300:1h").Result()
			if err != nil {
				t.Fatal(err)
			}
			counted += n
			a := o.admitted[u]
			admitted += int64(a)
			if a > limit || n > limit {
				t.Errorf("key %s: %d admitted, %d counted, over its limit of %d", u, a, n, limit)
			}
		}
		f, r := o.failed.Load(), o.lost.Load()
		t.Logf("%d migrations of slot %d: %d calls (%d batched in %d batch.lua calls), %d admitted, %d failed, %d ErrReplyLost; the server counted %d",
			moves, slot, o.calls.Load(), batched, calls, admitted, f, r, counted)
		if f != 0 {
			t.Fatalf("%d calls failed while their slot migrated, the first: %v", f, o.first)
		}
		if counted < admitted || counted > admitted+r {
			t.Fatalf("the server counted %d for %d admitted (and %d ErrReplyLost)", counted, admitted, r)
		}
		switch {
		case !routes && calls != 0:
			t.Fatalf("%d batch.lua calls on a client that cannot tell which primary serves a key: want each decision its own call", calls)
		case routes && batched == 0:
			t.Fatal("no decision went batched: the test proves nothing")
		}
	})
}

// Redis Cluster moves a slot's keys to another node one at a time, so for
// a moment a Policy's states sit on two nodes and its script is refused
// with TRYAGAIN: it did not run, and the decision reached the caller as an
// error. Moving the slot in use back and forth while Policies are decided
// on it, no call may fail, and the server must count exactly what callers
// were told was admitted.
//
// Batched, a call that a client sends again after it was written (go-redis's
// ClusterClient re-sent a node's whole pipeline when its first reply was
// TRYAGAIN) goes as a no-op the second time: the script runs once, and
// that call reports ErrReplyLost. Batched, then, a call may fail that way
// and no other, and the count must stay between what was admitted and
// that plus the failures.
//
// A move takes up to 2.7 s under -race with this module's other tests on
// two cores (lock's migration test measures its own); each decision's
// deadline outlasts that, as a service's own must outlast its migrations.
func TestRateLimitPolicyDecisionsDoNotFailWhileTheirSlotMigrates(t *testing.T) {
	eachClientLong(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t)
		rdb := cl.Client(t)
		client := k.cluster(t, cl)
		ctx := context.Background()
		// User keys whose states share one slot, so that every migration moves them.
		slot := redistest.KeySlot("{u0}")
		users := []string{"u0"}
		for i := 1; len(users) < 8; i++ {
			if u := "u" + strconv.Itoa(i); redistest.KeySlot("{"+u+"}") == slot {
				users = append(users, u)
			}
		}
		log := ratelimit.SlidingLog(1_000_000, time.Hour) // its members count what was admitted
		p := ratelimit.Policy{ratelimit.GCRA(1_000_000, time.Second, 1_000_000), log}
		for _, pass := range rateLimitPasses {
			name, batch := pass.name, pass.batch
			l := rateLimitNew(t, client, rateLimitOpts("rs"+name+":", batch)...)
			var admitted, failed, lost atomic.Int64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for g := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := g; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
						res, err := l.Allow(cctx, users[i%len(users)], p)
						cancel()
						switch {
						case batch > 0 && errors.Is(err, ratelimit.ErrReplyLost):
							lost.Add(1)
						case err != nil:
							failed.Add(1)
							t.Logf("%s: %v", name, err)
						case res.Allowed:
							admitted.Add(1)
						}
					}
				}()
			}
			const moves = 6
			for range moves {
				cl.MoveSlot(t, "{u0}", time.Millisecond)
			}
			close(stop)
			wg.Wait()
			counted := int64(0)
			for _, u := range users {
				n, err := rdb.ZCard(ctx, "rs"+name+":{"+u+"}:l1000000:1h").Result()
				if err != nil {
					t.Fatal(err)
				}
				counted += n
			}
			a, f, r := admitted.Load(), failed.Load(), lost.Load()
			t.Logf("%s: %d migrations of slot %d: %d admitted, %d failed, %d ErrReplyLost; the server counted %d", name, moves, slot, a, f, r, counted)
			if a == 0 {
				t.Fatalf("%s: nothing was decided during the migrations", name)
			}
			if f != 0 || counted < a || counted > a+r {
				t.Fatalf("%s: %d calls failed while their slot migrated (and %d ErrReplyLost); %d admitted, %d counted", name, f, r, a, counted)
			}
		}
	})
}

// In a slot being migrated, a key its node does not have is another
// node's, and a script that writes one fails ("Script attempted to access a
// non local key") after whatever it wrote before. A sliding log whose only
// member a call removed and wrote again deleted its key between the two:
// an Allow after a rejection (which had renamed that member) failed so,
// alone and in a Policy, where the Policy's other limit was already
// charged. Each write that adds comes before the one that removes, so the
// key is never deleted in a call that then writes it.
func TestRateLimitSlidingLogDecisionDoesNotFailOnItsOwnDeletedKeyInAMigratingSlot(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t)
		client := k.cluster(t, cl)
		ctx := context.Background()
		log := ratelimit.SlidingLog(2, time.Minute)
		for i, tc := range []struct {
			name  string
			rule  ratelimit.Rule
			batch int
		}{
			{"log", log, 0},
			{"policy", ratelimit.Policy{ratelimit.GCRA(10, time.Minute, 10), log}, 0},
			{"log batched", log, 4},
			{"policy batched", ratelimit.Policy{ratelimit.GCRA(10, time.Minute, 10), log}, 4},
		} {
			l := rateLimitNew(t, client, rateLimitOpts("mig"+strconv.Itoa(i)+":", tc.batch)...)
			const user = "m" // its keys' hash tag: {m}
			if res, err := l.Allow(ctx, user, tc.rule); err != nil || !res.Allowed {
				t.Fatalf("%s: first Allow: %+v, %v", tc.name, res, err)
			}
			if res, err := l.AllowN(ctx, user, tc.rule, 2); err != nil || res.Allowed {
				t.Fatalf("%s: AllowN(2) with one left: %+v, %v, want a rejection", tc.name, res, err)
			}
			_, _, abandon := cl.BeginSlotMigration(t, "{"+user+"}")
			res, err := l.Allow(ctx, user, tc.rule)
			abandon()
			if err != nil || !res.Allowed {
				t.Errorf("%s: Allow with one left, its slot migrating: %+v, %v, want allowed", tc.name, res, err)
			}
			if res, err := l.Allow(ctx, user, tc.rule); err != nil || res.Allowed {
				t.Errorf("%s: a third Allow of 2: %+v, %v, want a rejection", tc.name, res, err)
			}
		}
	})
}

// Settling a reservation replaces its record's member with a tombstone.
// Removing the member first deleted the record when it was the only one,
// and in a slot being migrated the tombstone's write then failed, after
// what the commit gave back had been written: the commit reported an
// error though it had partly taken effect.
func TestRateLimitCommitDoesNotFailOnItsOwnDeletedRecordInAMigratingSlot(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t)
		client := k.cluster(t, cl)
		ctx := context.Background()
		for _, pass := range rateLimitPasses {
			l := rateLimitNew(t, client, rateLimitOpts("migrsv"+pass.name+":", pass.batch)...)
			const user = "r" // its keys' hash tag: {r}
			for _, rule := range []ratelimit.Rule{ratelimit.GCRA(100, time.Minute, 100), ratelimit.SlidingLog(100, time.Minute)} {
				rs, err := l.Reserve(ctx, user, rule, 10, time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				_, _, abandon := cl.BeginSlotMigration(t, "{"+user+"}")
				res, err := rs.Commit(ctx, 4)
				abandon()
				if err != nil {
					t.Errorf("%s: %v: Commit with its slot migrating: %v", pass.name, rule, err)
					continue
				}
				if res.Remaining != 96 {
					t.Errorf("%s: %v: Commit(4) of 10 reserved: %d remaining, want 96", pass.name, rule, res.Remaining)
				}
			}
		}
	})
}

// A Reserve first releases its rule's reservations past their expiry,
// removing them from the rule's record. When they were all it held, the
// record was deleted, and in a slot being migrated the new reservation's
// write to it then failed, after its amount had been charged: the call
// reported an error, and the charge stood with no reservation to settle
// or expire (90 of 100 left instead of 100). The record now keeps a
// placeholder member instead of being emptied.
func TestRateLimitReserveDoesNotFailOnItsEmptiedRecordInAMigratingSlot(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		cl := redistest.StartCluster(t)
		client := k.cluster(t, cl)
		ctx := context.Background()
		const user = "e" // its keys' hash tag: {e}
		for _, pass := range rateLimitPasses {
			for i, rule := range []ratelimit.Rule{ratelimit.GCRA(100, time.Minute, 100), ratelimit.SlidingCounter(100, time.Minute)} {
				l := rateLimitNew(t, client, rateLimitOpts("migexp"+pass.name+strconv.Itoa(i)+":", pass.batch)...)
				const ttl = 50 * time.Millisecond
				if _, err := l.Reserve(ctx, user, rule, 10, ttl); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * ttl) // past its expiry on the server's clock too
				_, _, abandon := cl.BeginSlotMigration(t, "{"+user+"}")
				rs, err := l.Reserve(ctx, user, rule, 10, time.Minute)
				abandon()
				if err != nil {
					t.Errorf("%s: %v: Reserve after the only reservation expired, its slot migrating: %v", pass.name, rule, err)
					continue
				}
				if res, err := l.Peek(ctx, user, rule); err != nil || res.Remaining != 90 {
					t.Errorf("%s: %v: after the expired reservation's release and a new one of 10: %d remaining, %v; want 90", pass.name, rule, res.Remaining, err)
				}
				if _, err := rs.Cancel(ctx); err != nil {
					t.Errorf("%s: %v: Cancel: %v", pass.name, rule, err)
				}
				if res, err := l.Peek(ctx, user, rule); err != nil || res.Remaining != 100 {
					t.Errorf("%s: %v: after Cancel: %d remaining, %v; want 100", pass.name, rule, res.Remaining, err)
				}
			}
		}
	})
}
