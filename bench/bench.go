package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/valkey-io/valkey-go"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/rueidisadapter"
	"github.com/redis-primitives/go/valkeyadapter"
)

// runner holds one run's clients.
type runner struct {
	cfg     Config
	addr    string
	clients []*redis.Client
	closers []func() // clients of other kinds (rueidis)
}

// client returns a new client of the server with a connection for every
// goroutine and deadlines taken from the context. Each library gets one of
// its own, so none waits for another's connections.
func (r *runner) client() *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr:                  r.addr,
		DisableIdentity:       true,
		ContextTimeoutEnabled: true,
		PoolSize:              r.cfg.Goroutines + 10,
	})
	r.clients = append(r.clients, c)
	return c
}

// rueidisClient returns the primitives' client (what lock.New and
// ratelimit.New take) on a rueidis client of the server with its defaults
// (auto-pipelining; client-side caching off, which the primitives do not
// use), through rueidisadapter.
func (r *runner) rueidisClient() (luascripts.Client, error) {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{r.addr}, DisableCache: true})
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, rc.Close)
	return rueidisadapter.New(rc), nil
}

// valkeyClient is rueidisClient on valkey-go, through valkeyadapter.
func (r *runner) valkeyClient() (luascripts.Client, error) {
	vc, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{r.addr}, DisableCache: true})
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, vc.Close)
	return valkeyadapter.New(vc), nil
}

func (r *runner) close() {
	r.closeAllBut(nil)
	for _, c := range r.closers {
		c()
	}
	r.closers = nil
}

// closeAllBut closes every client but keep.
func (r *runner) closeAllBut(keep *redis.Client) {
	var kept []*redis.Client
	for _, c := range r.clients {
		if c == keep {
			kept = append(kept, c)
			continue
		}
		_ = c.Close()
	}
	r.clients = kept
}

// Run measures everything against the Redis server at addr and returns
// the report. It writes keys under cfg.Prefix and leaves them; give it a
// server of its own (cmd/bench starts one). It stops early, with ctx's
// error, when ctx ends.
func Run(ctx context.Context, addr string, cfg Config) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, addr: addr}
	defer r.close()
	started := time.Now()
	rep := &Report{Started: started, Config: ConfigJSON{
		DurationSeconds: cfg.Duration.Seconds(), Goroutines: cfg.Goroutines, Rounds: cfg.Rounds,
		Keys: cfg.Keys, MemoryKeys: cfg.MemoryKeys, Trials: cfg.Trials,
	}}

	admin := r.client()
	if err := admin.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("bench: redis at %s: %w", addr, err)
	}
	rep.Machine = machine(ctx, admin)
	lim, err := newLimitRun(ctx, admin, addr, cfg)
	if err != nil {
		return nil, err
	}

	locks, err := r.lockCases(ctx)
	if err != nil {
		return nil, err
	}
	locks[0].contenders = append(locks[0].contenders, contender{name: NameLimit,
		note: "redis-benchmark: EVALSHA of one SET NX PX, not pipelined; its rate halved; latencies per call",
		run: func(ctx context.Context, d time.Duration) (sample, error) {
			s, err := lim.run(ctx, d)
			s.Ops /= 2
			s.OK /= 2
			return s, err
		}})
	limiters, err := r.limiterCases(ctx)
	if err != nil {
		return nil, err
	}
	// The pipelined limit: what batching can at best approach, beside the
	// batched row.
	p16 := *lim
	p16.pipeline, p16.rate = 16, 0
	for _, c := range limiters {
		if c.id == TableLimitManyAdmit {
			c.contenders = append(c.contenders, contender{name: NameLimitP16,
				note: "redis-benchmark: EVALSHA of one SET NX PX, 16 in flight per client; latencies per call",
				run:  p16.run})
		}
	}
	sems, err := r.semaphoreCases(ctx)
	if err != nil {
		return nil, err
	}
	cases := append(append(locks, sems), limiters...)

	cfg.logf("warm-up and preparation (%v per contender)", cfg.Warmup)
	for _, c := range cases {
		c.samples = make([][]sample, len(c.contenders))
		for _, ct := range c.contenders {
			if ct.prepare != nil {
				if err := ct.prepare(ctx); err != nil {
					return nil, fmt.Errorf("bench: %s, %s: prepare: %w", c.title, ct.name, err)
				}
			}
			if cfg.Warmup > 0 {
				if _, err := runOnce(ctx, ct, cfg.Warmup); err != nil {
					return nil, fmt.Errorf("bench: %s, %s: warm-up: %w", c.title, ct.name, err)
				}
			}
		}
	}

	for round := range cfg.Rounds {
		cfg.logf("round %d of %d", round+1, cfg.Rounds)
		for _, c := range cases {
			for _, i := range order(len(c.contenders), round) {
				ct := c.contenders[i]
				before, err := readServerStats(ctx, admin)
				if err != nil {
					return nil, err
				}
				s, err := runOnce(ctx, ct, cfg.Duration)
				if err != nil {
					return nil, fmt.Errorf("bench: %s, %s, round %d: %w", c.title, ct.name, round+1, err)
				}
				after, err := readServerStats(ctx, admin)
				if err != nil {
					return nil, err
				}
				s.SrvCmd, s.SrvCPU = after.cmd-before.cmd, after.cpu-before.cpu
				c.samples[i] = append(c.samples[i], s)
				cfg.logf("  %-20s %-32s %9.0f %-10s p50 %5.0fµs  p99 %5.0fµs  server %5.1fµs/op (commands %5.1f)",
					c.id, ct.name, s.rate(), c.unit, us(s.p50), us(s.p99), s.srvPerOp(s.SrvCPU), s.srvPerOp(s.SrvCmd))
			}
		}
	}
	for _, c := range cases {
		rep.Tables = append(rep.Tables, c.table())
	}
	limitRow := rowOf("redis-benchmark EVALSHA SET NX PX", "calls/s, 50 clients, not pipelined", limitCalls(locks[0]), nil)
	rep.Limit = &limitRow

	// What the rounds leave would be freed while the memory is measured
	// and make used_memory shrink under it: the admitting limits' keys,
	// which expire a second or two after the last round (deleted now,
	// synchronously), and the hundreds of connections the rounds used,
	// whose buffers the server trims while they sit idle (closed now).
	if err := deleteKeys(ctx, admin, cfg.Prefix+"rl:*", "rate:"+cfg.Prefix+"rl:*"); err != nil {
		return nil, err
	}
	r.closeAllBut(admin)
	if err := waitClients(ctx, admin, 1); err != nil {
		return nil, err
	}
	cfg.logf("memory per key: %d keys, %d requests each, limit %d per %v", cfg.MemoryKeys, memoryQuota.n+memoryExtra, memoryQuota.n, memoryQuota.window)
	if rep.Memory, err = r.memory(ctx); err != nil {
		return nil, err
	}

	if rep.SemaphoreMemory, err = r.semaphoreMemory(ctx); err != nil {
		return nil, err
	}

	if rep.Election, err = r.election(ctx); err != nil {
		return nil, err
	}

	rep.Targets = targets(cases, rep)
	rep.Took = time.Since(started).Seconds()
	rep.Machine.LoadEnd = loadAvg()
	return rep, nil
}

// runOnce runs one contender once. Every operation gets a context with a
// deadline, as a request handler's would have: some libraries add one of
// their own when there is none, which would be measured as theirs.
func runOnce(ctx context.Context, ct contender, d time.Duration) (sample, error) {
	ctx, cancel := context.WithTimeout(ctx, d+time.Minute)
	defer cancel()
	return ct.run(ctx, d)
}

// limitCalls recovers redis-benchmark's own call rate from the halved
// samples of the limit's row.
func limitCalls(c *benchCase) []sample {
	for i, ct := range c.contenders {
		if ct.name == NameLimit {
			var out []sample
			for _, s := range c.samples[i] {
				s.Ops *= 2
				s.OK *= 2
				out = append(out, s)
			}
			return out
		}
	}
	return nil
}
