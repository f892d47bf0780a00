package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/ulule/limiter/v3"
	ulredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/ratelimit"
)

// A quota is a limit in the terms every library understands: n requests
// per window. What each library makes of it:
//
//   - sliding log, sliding counter: n per sliding window;
//   - GCRA (ours and redis_rate): n per window sustained, burst n;
//   - the two-limit policy: GCRA n per window, burst n, and a sliding
//     counter of 24·n per day (the daily limit never binds here: it is
//     the second limit's cost that is measured);
//   - ulule/limiter: n per fixed window that starts at a key's first
//     request (an INCR with a TTL). It counts rejected requests too.
type quota struct {
	n      int
	window time.Duration
}

// admitQuota admits everything the benchmark can send: a million a second.
var admitQuota = quota{n: 1_000_000, window: time.Second}

// rejectQuota admits 5 an hour; the keys are spent before the first round,
// so every measured request on them is a rejection.
var rejectQuota = quota{n: 5, window: time.Hour}

// memoryQuota is the "limit of 100 per minute".
var memoryQuota = quota{n: 100, window: time.Minute}

// denyCacheSize is the deny cache's size in the rows that use one: the
// many-keys space.
const denyCacheSize = 10_000

// batchSize is the batch size in the rows that batch (WithBatching): more
// than the goroutines, so a batch is bounded by who is waiting.
const batchSize = 64

// An allower makes one rate-limited request on key and reports whether it
// was admitted.
type allower func(ctx context.Context, key string) (bool, error)

// limiterImpl is one library, or one of our algorithms, under test.
type limiterImpl struct {
	name string
	note string
	// prefix is where its keys go in Redis, for the memory measurement.
	keyPattern func(prefix string) string
	// make builds the allower on c, a go-redis client of the impl's own.
	make func(c *redis.Client, prefix string, q quota) (allower, error)
}

// adapterLimiterImpls are our GCRA through the other clients' adapters,
// measured in the throughput tables only (their keys and scripts are
// GCRA's). Each runs on a client of its own, made by newClient at its
// first table and shared by its others; the go-redis client make is given
// goes unused.
func (r *runner) adapterLimiterImpls() []limiterImpl {
	via := func(name, note, as string, newClient func() (ratelimit.Client, error)) limiterImpl {
		var client ratelimit.Client
		return limiterImpl{name: name, note: note,
			keyPattern: func(prefix string) string { return prefix + "*" },
			make: func(_ *redis.Client, prefix string, q quota) (allower, error) {
				if client == nil {
					c, err := newClient()
					if err != nil {
						return nil, err
					}
					client = c
				}
				return oursAllower(as)(client, prefix, q)
			}}
	}
	return []limiterImpl{
		via(NameOursGCRARueidis, "GCRA(n, window, burst n) through rueidisadapter (rueidis defaults)", NameOursGCRA, r.rueidisClient),
		via(NameOursGCRARueidisBatch, "the same, WithBatching(64)", NameOursBatch, r.rueidisClient),
		via(NameOursGCRAValkey, "GCRA(n, window, burst n) through valkeyadapter (valkey-go defaults)", NameOursGCRA, r.valkeyClient),
	}
}

func ourRule(name string, q quota) ratelimit.Rule {
	switch name {
	case NameOursLog:
		return ratelimit.SlidingLog(q.n, q.window)
	case NameOursCounter:
		return ratelimit.SlidingCounter(q.n, q.window)
	case NameOursGCRA, NameOursDeny, NameOursBatch, NameOursReserve:
		return ratelimit.GCRA(q.n, q.window, q.n)
	default:
		return ratelimit.Policy{ratelimit.GCRA(q.n, q.window, q.n), ratelimit.SlidingCounter(24*q.n, 24*time.Hour)}
	}
}

// oursAllower makes our limiter row name's allowers, on client: a client
// through its adapter.
func oursAllower(name string) func(client ratelimit.Client, prefix string, q quota) (allower, error) {
	return func(client ratelimit.Client, prefix string, q quota) (allower, error) {
		opts := []ratelimit.Option{ratelimit.WithPrefix(prefix)}
		if name == NameOursDeny {
			opts = append(opts, ratelimit.WithDenyCache(denyCacheSize))
		}
		if name == NameOursBatch {
			opts = append(opts, ratelimit.WithBatching(batchSize))
		}
		l, err := ratelimit.New(client, opts...)
		if err != nil {
			return nil, err
		}
		rule := ourRule(name, q)
		if name == NameOursReserve {
			// One unit reserved, then committed in full: two scripts a
			// request, the price of settling the cost after the work.
			return func(ctx context.Context, key string) (bool, error) {
				rs, err := l.Reserve(ctx, key, rule, 1, time.Minute)
				if err != nil || !rs.Result.Allowed {
					return false, err
				}
				_, err = rs.Commit(ctx, 1)
				return err == nil, err
			}, nil
		}
		return func(ctx context.Context, key string) (bool, error) {
			res, err := l.Allow(ctx, key, rule)
			return res.Allowed, err
		}, nil
	}
}

func limiterImpls() []limiterImpl {
	ours := func(name, note string) limiterImpl {
		return limiterImpl{name: name, note: note,
			keyPattern: func(prefix string) string { return prefix + "*" },
			make: func(c *redis.Client, prefix string, q quota) (allower, error) {
				return oursAllower(name)(goredisadapter.New(c), prefix, q)
			}}
	}
	return []limiterImpl{
		ours(NameOursLog, "SlidingLog(n, window)"),
		ours(NameOursCounter, "SlidingCounter(n, window)"),
		ours(NameOursGCRA, "GCRA(n, window, burst n)"),
		ours(NameOursPolicy, "Policy{GCRA(n, window, n), SlidingCounter(24n, 24h)}"),
		ours(NameOursDeny, "GCRA(n, window, burst n), WithDenyCache(10000): rejections answered in process until their RetryAfter"),
		ours(NameOursBatch, "GCRA(n, window, burst n), WithBatching(64): concurrent decisions share pipelined round trips"),
		ours(NameOursReserve, "GCRA(n, window, burst n): Reserve(1) then Commit(1), two round trips a request"),
		{name: NameRedisRate, note: "GCRA: Limit{Rate: n, Burst: n, Period: window}",
			// redis_rate's prefix "rate:" is fixed; ours goes into the key.
			keyPattern: func(prefix string) string { return "rate:" + prefix + "*" },
			make: func(c *redis.Client, prefix string, q quota) (allower, error) {
				l := redis_rate.NewLimiter(c)
				lim := redis_rate.Limit{Rate: q.n, Burst: q.n, Period: q.window}
				return func(ctx context.Context, key string) (bool, error) {
					res, err := l.Allow(ctx, prefix+key, lim)
					if err != nil {
						return false, err
					}
					return res.Allowed > 0, nil
				}, nil
			}},
		{name: NameUlule, note: "fixed window (INCR + PEXPIRE): Rate{Limit: n, Period: window}",
			keyPattern: func(prefix string) string { return prefix + "*" },
			make: func(c *redis.Client, prefix string, q quota) (allower, error) {
				store, err := ulredis.NewStoreWithOptions(c, limiter.StoreOptions{Prefix: prefix[:len(prefix)-1]})
				if err != nil {
					return nil, err
				}
				l := limiter.New(store, limiter.Rate{Limit: int64(q.n), Period: q.window})
				return func(ctx context.Context, key string) (bool, error) {
					res, err := l.Get(ctx, key)
					return !res.Reached, err
				}, nil
			}},
	}
}

// limiterScenario is one limiter table: a quota on one hot key or many.
type limiterScenario struct {
	id    string
	title string
	q     quota
	hot   bool
	// long names keys as services do: a 36-byte id (a UUID) after
	// "user:", not "k17".
	long bool
	// only, when set, are the libraries measured (the sweep's tables).
	only []string
}

// sweepQuotas span the limits the issue names, 5 per hour to 10^9 per
// second, beside the admitting table's 10^6 per second. Keys are not
// spent first: 5 per hour admits each key's first 5, then rejects.
var sweepQuotas = []quota{{5, time.Hour}, {100, time.Minute}, {1_000_000_000, time.Second}}

// sweepLibraries are measured at every limit of the sweep: the O(1)
// algorithms (a log of 10^9 is not a use) and the reference.
var sweepLibraries = []string{NameOursCounter, NameOursGCRA, NameOursBatch, NameRedisRate}

// longKey is key i as a 36-byte id: the shape of a real user or API key.
func longKey(i int) string {
	return fmt.Sprintf("user:%08x-%04x-4%03x-8%03x-%012x", i*2654435761%(1<<32), i%0xffff, i%0xfff, (i/7)%0xfff, i)
}

func (r *runner) limiterScenarios() []limiterScenario {
	scs := []limiterScenario{
		{id: TableLimitHotAdmit, title: "Limiters, 1 hot key, a limit that admits every request", q: admitQuota, hot: true},
		{id: TableLimitManyAdmit, title: fmt.Sprintf("Limiters, %d keys, a limit that admits every request", r.cfg.Keys), q: admitQuota},
		{id: TableLimitHotReject, title: "Limiters, 1 hot key, a limit that rejects (5 per hour, spent before the first round)", q: rejectQuota, hot: true},
		{id: TableLimitManyReject, title: fmt.Sprintf("Limiters, %d keys, a limit that rejects (5 per hour, each key spent before the first round)", r.cfg.Keys), q: rejectQuota},
		{id: TableLimitLongKeys, title: fmt.Sprintf("Limiters, %d long keys (\"user:\" + a 36-byte id), a limit that admits every request", r.cfg.Keys), q: admitQuota, long: true},
	}
	for _, q := range sweepQuotas {
		scs = append(scs, limiterScenario{id: TableLimitSweep + q.String(), q: q, long: true, only: sweepLibraries,
			title: fmt.Sprintf("Limiters, %d long keys, limit %s (the sweep; keys not spent first)", r.cfg.Keys, q)})
	}
	return scs
}

// String is q as a table id part and title: "5/1h0m0s".
func (q quota) String() string { return fmt.Sprintf("%d/%v", q.n, q.window) }

// limiterCases builds the four limiter tables. Each library has a client
// of its own, shared by its four cases.
func (r *runner) limiterCases(ctx context.Context) ([]*benchCase, error) {
	var cases []*benchCase
	for _, sc := range r.limiterScenarios() {
		cases = append(cases, &benchCase{id: sc.id, title: sc.title, unit: "requests/s", okUnit: "admitted/s", ref: NameRedisRate})
	}
	for _, im := range append(limiterImpls(), r.adapterLimiterImpls()...) {
		c := r.client()
		for si, sc := range r.limiterScenarios() {
			if sc.only != nil && !slices.Contains(sc.only, im.name) {
				continue
			}
			prefix := r.cfg.Prefix + "rl:" + im.name + ":" + sc.id + ":"
			allow, err := im.make(c, prefix, sc.q)
			if err != nil {
				return nil, fmt.Errorf("bench: %s: %w", im.name, err)
			}
			keys := []string{"hot"}
			if !sc.hot {
				keys = make([]string, r.cfg.Keys)
				for i := range keys {
					keys[i] = "k" + strconv.Itoa(i)
					if sc.long {
						keys[i] = longKey(i)
					}
				}
			}
			g := r.cfg.Goroutines
			ct := contender{name: im.name, note: im.note, ref: im.name == NameRedisRate,
				run: func(ctx context.Context, d time.Duration) (sample, error) {
					return measure(ctx, g, d, func(ctx context.Context, g, i int) (bool, error) {
						if len(keys) == 1 {
							return allow(ctx, keys[0])
						}
						return allow(ctx, keys[keyOf(g, i, r.cfg.Goroutines, len(keys))])
					})
				}}
			if sc.q == rejectQuota && sc.only == nil {
				ct.prepare = func(ctx context.Context) error {
					// Use up every key's quota before the first measured round.
					_, err := r.fill(ctx, allow, keys, sc.q.n)
					return err
				}
			}
			cases[si].contenders = append(cases[si].contenders, ct)
		}
	}
	return cases, nil
}
