package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/ratelimit"
)

// A CostCase is one operation whose server cost ServerCost measures.
type CostCase struct {
	Name string
	// Concurrency is the goroutines that share the N operations: 1 (one
	// operation at a time) unless the case batches.
	Concurrency int
	// prepare runs before the counters are zeroed (loads scripts, spends
	// keys); op is one operation, i counting from 0.
	prepare func(ctx context.Context) error
	op      func(ctx context.Context, i int) error
}

// CostCases are the operations ServerCost measures, on clients of addr
// (one per case, so that a case's connections carry nothing else):
// a PING as the floor of any round trip, the limit's one-SET script, lock
// acquire+release and a refused acquire, ours and the peers', and one
// admitted and one rejected decision of every limiter row of make bench.
// Every key starts with prefix. The returned func closes the clients.
func CostCases(addr, prefix string, keys int) ([]CostCase, func()) {
	var clients []*redis.Client
	client := func() *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 60, ContextTimeoutEnabled: true})
		clients = append(clients, c)
		return c
	}
	key := func(i int) string { return "k" + strconv.Itoa(i%keys) }
	var cases []CostCase
	add := func(name string, prepare func(context.Context) error, op func(context.Context, int) error) {
		cases = append(cases, CostCase{Name: name, Concurrency: 1, prepare: prepare, op: op})
	}
	nothing := func(context.Context) error { return nil }
	// script adds a case that runs src on keys(i) with args; a nil reply
	// (a SET NX that set nothing) is not an error.
	script := func(name, src string, keys func(i int) []string, args ...any) {
		c, sc := client(), redis.NewScript(src)
		add(name, func(ctx context.Context) error { return sc.Load(ctx, c).Err() },
			func(ctx context.Context, i int) error {
				err := sc.EvalSha(ctx, c, keys(i), args...).Err()
				if err == redis.Nil {
					err = nil
				}
				return err
			})
	}

	c := client()
	add("PING (a round trip)", nothing, func(ctx context.Context, _ int) error { return c.Ping(ctx).Err() })
	script("the limit: EVALSHA of one SET NX PX", limitScript,
		func(i int) []string { return []string{prefix + "limit:" + key(i)} }, "v", 1000)

	// hold takes a lock as another holder would, and keeps it.
	type hold func(ctx context.Context, c *redis.Client, prefix, name string) error
	holdOurs := func(ctx context.Context, c *redis.Client, prefix, name string) error {
		l, err := lock.New(goredisadapter.New(c), lock.WithPrefix(prefix))
		if err == nil {
			_, err = l.Acquire(ctx, name, time.Hour)
		}
		return err
	}
	for li, lk := range []struct {
		name string
		make func(c *redis.Client, prefix string) (locker, error)
		hold hold
	}{
		{NameOursLock, oursLocker, holdOurs},
		{NameOursLock + ", WithCounterTokens", func(c *redis.Client, prefix string) (locker, error) {
			return oursLockerWith(goredisadapter.New(c), lock.WithPrefix(prefix), lock.WithCounterTokens())
		}, holdOurs},
		{NameRedislock, func(c *redis.Client, _ string) (locker, error) { return redislockLocker(c), nil },
			func(ctx context.Context, c *redis.Client, _, name string) error {
				_, err := redislock.New(c).Obtain(ctx, name, time.Hour, nil)
				return err
			}},
	} {
		c := client()
		lp := prefix + "lock" + strconv.Itoa(li) + ":"
		l, err := lk.make(c, lp)
		if err != nil {
			panic(err) // the options are constants
		}
		kb := lockKeyBase(lk.name, lp)
		add(lk.name+": acquire+release", nothing, func(ctx context.Context, i int) error {
			ok, err := l(ctx, kb+key(i))
			if err == nil && !ok {
				err = fmt.Errorf("%s: refused a free lock", lk.name)
			}
			return err
		})
		// A refused attempt: another holder keeps the lock for an hour.
		held := kb + "held"
		add(lk.name+": refused acquire", func(ctx context.Context) error {
			if _, err := l(ctx, kb+"load"); err != nil { // loads the scripts
				return err
			}
			return lk.hold(ctx, client(), lp, held)
		}, func(ctx context.Context, _ int) error {
			ok, err := l(ctx, held)
			if err == nil && ok {
				err = fmt.Errorf("%s: took a held lock", lk.name)
			}
			return err
		})
	}

	// The batched lock: 50 goroutines whose acquires and releases share
	// pipelined round trips, the server's cost per pair with the
	// per-command overhead shared.
	bl, err := oursLockerWith(goredisadapter.New(client()), lock.WithPrefix(prefix+"lockbatch:"), lock.WithBatching(64))
	if err != nil {
		panic(err) // the options are constants
	}
	add(NameOursLockBatch+": acquire+release", nothing, func(ctx context.Context, i int) error {
		ok, err := bl(ctx, "b"+strconv.Itoa(i)) // i is unique across the goroutines
		if err == nil && !ok {
			err = fmt.Errorf("%s: refused a free lock", NameOursLockBatch)
		}
		return err
	})
	cases[len(cases)-1].Concurrency = 50

	// Floors: each primitive's commands alone, with none of its logic,
	// against the same kind of keys. What a script costs above its floor
	// is its Lua; what the floor costs above a peer's is its commands.
	value := strings.Repeat("v", 32) + " " + strings.Repeat("o", 16) // "<id> <owner>"'s length
	acquire, release := redis.NewScript(floorAcquire), redis.NewScript(floorRelease)
	fc := client()
	add("floor: a hybrid-token acquire's commands, + release", func(ctx context.Context) error {
		if err := acquire.Load(ctx, fc).Err(); err != nil {
			return err
		}
		return release.Load(ctx, fc).Err()
	}, func(ctx context.Context, i int) error {
		k := prefix + "floor:lock:{" + key(i) + "}"
		if err := acquire.EvalSha(ctx, fc, []string{k, k + ":token"}, value, 10000).Err(); err != nil {
			return err
		}
		return release.EvalSha(ctx, fc, []string{k}, value).Err()
	})
	state := strings.Repeat("s", 9) // a counter's or GCRA's packed state
	script("floor: one limit's commands (TIME, GET, SET PX)", floorOneLimit,
		func(i int) []string { return []string{prefix + "floor:one:{" + key(i) + "}"} }, state, 60000)
	script("floor: a policy of 2's commands (TIME, 2 GET, 2 SET PX)", floorPolicy,
		func(i int) []string {
			k := prefix + "floor:policy:{" + key(i) + "}"
			return []string{k + ":a", k + ":b"}
		}, state, 60000, 86400000)
	script("floor: plain sorted-set log, admitted (no guard, no wait)", plainLogSource,
		func(i int) []string { return []string{prefix + "floor:log:" + key(i)} }, admitQuota.n, admitQuota.window.Microseconds())
	// One key, 5 an hour: every call but the first five is a rejection.
	script("floor: plain sorted-set log, rejected", plainLogSource,
		func(i int) []string { return []string{prefix + "floor:log:spent"} }, rejectQuota.n, rejectQuota.window.Microseconds())

	for ii, im := range limiterImpls() {
		for _, q := range []struct {
			what string
			q    quota
		}{{"admitted", admitQuota}, {"rejected", rejectQuota}} {
			c := client()
			allow, err := im.make(c, prefix+"rl"+strconv.Itoa(ii)+":"+q.what+":", q.q)
			if err != nil {
				panic(err)
			}
			want := q.what == "admitted"
			prepare := func(ctx context.Context) error {
				// Loads the scripts; for rejections, spends every key.
				for i := range keys {
					for range q.q.n + 1 {
						if _, err := allow(ctx, key(i)); err != nil {
							return err
						}
						if want {
							break
						}
					}
				}
				return nil
			}
			if im.name == NameOursDeny {
				continue // answers rejections in process: no server cost to measure
			}
			cc := CostCase{Name: im.name + ": " + q.what, Concurrency: 1, prepare: prepare,
				op: func(ctx context.Context, i int) error {
					ok, err := allow(ctx, key(i))
					if err == nil && ok != want {
						err = fmt.Errorf("%s: admitted %v, want %v", im.name, ok, want)
					}
					return err
				}}
			if im.name == NameOursBatch {
				cc.Concurrency = 50
			}
			cases = append(cases, cc)
		}
	}
	// The batch's other flat body and its general one: a sliding counter's
	// and a policy of two's admitted decisions from 50 goroutines, as the
	// batched GCRA row makes GCRA's (make bench has no row for them).
	for bi, b := range []struct {
		name string
		rule ratelimit.Rule
	}{
		{NameOursCounter + " + batching", ourRule(NameOursCounter, admitQuota)},
		{NameOursPolicy + " + batching", ourRule(NameOursPolicy, admitQuota)},
	} {
		l, err := ratelimit.New(goredisadapter.New(client()), ratelimit.WithPrefix(prefix+"rlbatch"+strconv.Itoa(bi)+":"), ratelimit.WithBatching(batchSize))
		if err != nil {
			panic(err) // the options are constants
		}
		add(b.name+": admitted", nothing, func(ctx context.Context, i int) error {
			res, err := l.Allow(ctx, key(i), b.rule)
			if err == nil && !res.Allowed {
				err = fmt.Errorf("%s: rejected", b.name)
			}
			return err
		})
		cases[len(cases)-1].Concurrency = 50
	}
	// A reservation extended once before its commit: the extension's cost
	// is this row's less Reserve+Commit's.
	rl, err := ratelimit.New(goredisadapter.New(client()), ratelimit.WithPrefix(prefix+"rlextend:"))
	if err != nil {
		panic(err) // the options are constants
	}
	extendRule := ourRule(NameOursReserve, admitQuota)
	add(NameOursReserve+" + Extend: admitted", nothing, func(ctx context.Context, i int) error {
		rs, err := rl.Reserve(ctx, key(i), extendRule, 1, time.Minute)
		if err == nil && !rs.Result.Allowed {
			err = fmt.Errorf("%s + Extend: rejected", NameOursReserve)
		}
		if err == nil {
			err = rs.Extend(ctx, time.Minute)
		}
		if err == nil {
			_, err = rs.Commit(ctx, 1)
		}
		return err
	})
	return cases, func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}
}

// RunCost runs cs: prepare, then zero(), then n operations, then done().
// zero and done bracket what the caller counts (callgrind_control -z and
// -d on the server).
func RunCost(ctx context.Context, cs CostCase, n int, zero, done func() error) error {
	if err := cs.prepare(ctx); err != nil {
		return fmt.Errorf("%s: %w", cs.Name, err)
	}
	if err := zero(); err != nil {
		return err
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	per := n / cs.Concurrency
	for g := range cs.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if err := cs.op(ctx, g*per+i); err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("%s: %w", cs.Name, err)
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return done()
}

// floorAcquire is a hybrid-token acquire's three commands with none of
// its checks: take the lock (or read the holder), read the clock, swap
// the counter.
const floorAcquire = `redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2], 'GET')
local t = redis.call('TIME')
redis.call('SET', KEYS[2], t[1] * 1000000 + t[2], 'GET')
return 1`

// floorRelease is a compare-and-delete (bsm/redislock's release).
const floorRelease = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`

// floorOneLimit is a counter's or GCRA's decision with no arithmetic: the
// clock, the state read and written, a reply of five integers.
const floorOneLimit = `local t = redis.call('TIME')
local v = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {1, 1, 1, 0, 1}`

// floorPolicy is a policy of two such limits with no arithmetic.
const floorPolicy = `local t = redis.call('TIME')
local a = redis.call('GET', KEYS[1])
local b = redis.call('GET', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
return {1, 1, 1, 1, 0, 1, 1, 1, 0, 1}`
