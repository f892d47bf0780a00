package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/examples/internal/promtel"
	"github.com/redis-primitives/go/examples/internal/servers"
	"github.com/redis-primitives/go/fence/pgfence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/telemetry/pgfencetel"
)

type config struct {
	redisAddr, dsn string
	prefix         string        // Redis key prefix; default "scheduler:"
	nodes          int           // how many nodes contend
	every          time.Duration // how often the job fires
	runFor         time.Duration // 0: until ctx ends, no scripted handover
	lease          time.Duration // the leader's lease
	slow           time.Duration // the run in flight at the handover; default 4 × every
	// metrics receives each node's telemetry (elections, fenced writes),
	// labelled service_instance_id=<node>; nil: a registry no one reads.
	metrics *promtel.Metrics
}

const schema = `
CREATE TABLE IF NOT EXISTS scheduler_runs (
	job         text        NOT NULL,
	slot        timestamptz NOT NULL,
	node        text        NOT NULL,
	epoch       bigint      NOT NULL,
	recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (job, slot)
);`

// jobRun is a row of scheduler_runs.
type jobRun struct {
	slot       time.Time
	node       string
	epoch      int64
	recordedAt time.Time
}

// refusal is a run whose write Guard refused.
type refusal struct {
	node           string
	slot           time.Time
	epoch, highest int64
}

// outcome is what a run of the scheduler did, for the test.
type outcome struct {
	job      string
	runs     []jobRun
	refused  []refusal
	handover time.Duration // from stopping the leader to the next election; 0 if none was scripted
	stopped  string        // the node stopped halfway
	slowSlot time.Time     // the slot of the slow run it had in flight
}

// fired is a run a leader fired: its node and slot.
type fired struct {
	node string
	slot time.Time
}

type scheduler struct {
	cfg   config
	job   string
	pool  *pgxpool.Pool
	start time.Time
	w     io.Writer

	jobs     sync.WaitGroup
	slowNext atomic.Bool  // the next run fired is slow
	slowSent chan fired   // receives the slow run when it is fired
	elected  chan stamped // every election of every node
	mu       sync.Mutex   // guards out and the writer
	out      outcome
}

type stamped struct {
	node  string
	epoch int64
	at    time.Time
}

func (s *scheduler) say(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, "[%5dms] "+format+"\n", append([]any{time.Since(s.start).Milliseconds()}, args...)...)
}

// run starts the nodes, lets them work for cfg.runFor (stopping the leader
// halfway), stops them, waits for every job run, and reports the runs.
func run(ctx context.Context, cfg config, w io.Writer) (outcome, error) {
	if cfg.prefix == "" {
		cfg.prefix = "scheduler:"
	}
	if cfg.slow == 0 {
		cfg.slow = 4 * cfg.every
	}
	if cfg.metrics == nil {
		cfg.metrics = promtel.New()
	}
	if cfg.nodes < 2 || cfg.every <= 0 || cfg.lease <= 0 {
		return outcome{}, fmt.Errorf("want at least 2 nodes and positive -every and -lease (got %d, %v, %v)", cfg.nodes, cfg.every, cfg.lease)
	}
	pool, err := pgxpool.New(ctx, cfg.dsn)
	if err != nil {
		return outcome{}, err
	}
	defer pool.Close()
	store, err := pgfence.New()
	if err != nil {
		return outcome{}, err
	}
	if err := store.CreateTables(ctx, pool); err != nil {
		return outcome{}, err
	}
	if _, err := pool.Exec(ctx, schema); err != nil {
		return outcome{}, fmt.Errorf("create tables: %w", err)
	}
	s := &scheduler{
		cfg: cfg, job: "digest-" + servers.RandomHex(3), pool: pool, start: time.Now(), w: w,
		slowSent: make(chan fired, 1), elected: make(chan stamped, 64),
	}
	s.out.job = s.job
	s.say("%d nodes; job %s every %v; lease %v", cfg.nodes, s.job, cfg.every, cfg.lease)

	name := s.job // the election is per job
	var nodes []*node
	defer func() {
		for _, n := range nodes {
			n.stop()
		}
	}()
	for i := range cfg.nodes {
		n, err := s.startNode(ctx, fmt.Sprintf("node-%d", i+1), name)
		if err != nil {
			return s.out, err
		}
		nodes = append(nodes, n)
	}

	err = s.script(ctx, nodes)
	for _, n := range nodes { // all at once, so that no follower is elected on the way out
		n.cancel()
	}
	for _, n := range nodes {
		n.stop()
	}
	s.jobs.Wait() // every run fired, slow ones included, has finished
	if err != nil && !(cfg.runFor == 0 && ctx.Err() != nil) {
		return s.out, err
	}
	// Report even after Ctrl-C.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return s.out, s.report(rctx)
}

// script waits for cfg.runFor, stopping the leader halfway right after it
// fired a slow run. With runFor 0 it waits for ctx.
func (s *scheduler) script(ctx context.Context, nodes []*node) error {
	if s.cfg.runFor == 0 {
		<-ctx.Done()
		return ctx.Err()
	}
	end := s.start.Add(s.cfg.runFor)
	if err := sleepUntil(ctx, s.start.Add(s.cfg.runFor/2)); err != nil {
		return err
	}
	s.slowNext.Store(true)
	var slow fired
	select {
	case slow = <-s.slowSent:
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(s.cfg.lease + 5*s.cfg.every):
		return errors.New("no leader fired the job halfway through")
	}
	for len(s.elected) > 0 { // only elections from now on count
		<-s.elected
	}
	who := slow.node
	s.say("%s is stopped for a deploy; its slow run is still in flight", who)
	stopped := time.Now()
	for _, n := range nodes {
		if n.id == who {
			n.stop()
		}
	}
	select {
	case e := <-s.elected:
		s.out.handover, s.out.stopped, s.out.slowSlot = e.at.Sub(stopped), who, slow.slot
		s.say("%s took over %.1f ms after %s stopped (it released its lease)", e.node, float64(e.at.Sub(stopped).Microseconds())/1000, who)
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(s.cfg.lease + 5*time.Second):
		return errors.New("no node took over")
	}
	return sleepUntil(ctx, end)
}

// leader is a leader's work: fire the job every cfg.every until the term
// ends. Each run is a goroutine of its own that outlives the term if it is
// slow, as runs fired by a scheduler do.
func (s *scheduler) leader(id string, store *pgfence.Store) func(context.Context, election.Term) error {
	return func(ctx context.Context, term election.Term) error {
		t := time.NewTicker(s.cfg.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case now := <-t.C:
				work := 10 * time.Millisecond
				slow := s.slowNext.CompareAndSwap(true, false)
				if slow {
					work = s.cfg.slow
				}
				slot := now.Truncate(s.cfg.every)
				s.jobs.Go(func() { s.runJob(id, store, term.Epoch, slot, work) })
				if slow {
					s.say("%s (epoch %d) fired %s; this run will take %v", id, term.Epoch, slot.Format("15:04:05.000"), work)
					s.slowSent <- fired{node: id, slot: slot}
				}
			}
		}
	}
}

// runJob does the job's work, then records the run under Guard: the write
// commits only if no newer epoch has written for this job.
func (s *scheduler) runJob(id string, store *pgfence.Store, epoch int64, slot time.Time, work time.Duration) {
	time.Sleep(work) // the job's work; it does not watch the term, as most jobs do not
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := store.Guard(ctx, tx, "scheduler:"+s.job, epoch); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO scheduler_runs (job, slot, node, epoch) VALUES ($1, $2, $3, $4) ON CONFLICT (job, slot) DO NOTHING`,
			s.job, slot, id, epoch)
		return err
	})
	var stale *pgfence.StaleError
	switch {
	case errors.As(err, &stale):
		s.mu.Lock()
		s.out.refused = append(s.out.refused, refusal{node: id, slot: slot, epoch: epoch, highest: stale.Highest})
		s.mu.Unlock()
		s.say("%s (epoch %d) run %s REFUSED by pgfence: epoch %d < %d already written; rolled back",
			id, epoch, slot.Format("15:04:05.000"), stale.Token, stale.Highest)
	case err != nil:
		s.say("%s (epoch %d) run %s failed: %v", id, epoch, slot.Format("15:04:05.000"), err)
	default:
		s.say("%s (epoch %d) run %s recorded", id, epoch, slot.Format("15:04:05.000"))
	}
}

func (s *scheduler) report(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, `SELECT slot, node, epoch, recorded_at FROM scheduler_runs WHERE job = $1 ORDER BY slot`, s.job)
	if err != nil {
		return err
	}
	s.out.runs, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (jobRun, error) {
		var j jobRun
		return j, r.Scan(&j.slot, &j.node, &j.epoch, &j.recordedAt)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(s.w, "\nruns recorded for %s:\n", s.job)
	for _, r := range s.out.runs {
		fmt.Fprintf(s.w, "  %s  %-7s epoch %d\n", r.slot.Local().Format("15:04:05.000"), r.node, r.epoch)
	}
	fmt.Fprintf(s.w, "%d runs recorded; late runs of an old term refused: %d\n", len(s.out.runs), len(s.out.refused))
	// What Guard guarantees: once a run of a newer epoch has been recorded,
	// no run of an older one is.
	var newest int64
	for _, r := range byRecorded(s.out.runs) {
		if r.epoch < newest {
			return fmt.Errorf("run %s of epoch %d recorded after epoch %d had written", r.slot, r.epoch, newest)
		}
		newest = max(newest, r.epoch)
	}
	return nil
}

func byRecorded(runs []jobRun) []jobRun {
	s := append([]jobRun(nil), runs...)
	for i := 1; i < len(s); i++ { // few rows: insertion sort
		for j := i; j > 0 && s[j].recordedAt.Before(s[j-1].recordedAt); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// node is one contender, with a client of its own.
type node struct {
	id       string
	client   *redis.Client
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once
}

func (s *scheduler) startNode(ctx context.Context, id, name string) (*node, error) {
	// Each node reports as the separate process it stands for: its own
	// Telemetry, labelled with its id. Telemetry's Election counts
	// elections, demotions and every leader change this node sees; the
	// store's hook counts fenced writes, accepted or refused as stale.
	tel, err := s.cfg.metrics.Telemetry("scheduler", id)
	if err != nil {
		return nil, err
	}
	store, err := pgfence.New(pgfence.WithHook(pgfencetel.Hook(tel)))
	if err != nil {
		return nil, err
	}
	hook := func(ctx context.Context, e election.Event) {
		tel.Election(ctx, e)
		switch e.Op {
		case "elected":
			s.say("%s elected (epoch %d)", id, e.Epoch)
			select {
			case s.elected <- stamped{id, e.Epoch, time.Now()}:
			default:
			}
		case "demoted":
			s.say("%s steps down (epoch %d, led %v): %v", id, e.Epoch, e.Held.Round(time.Millisecond), e.Reason)
		}
	}
	c := redis.NewClient(&redis.Options{Addr: s.cfg.redisAddr, ContextTimeoutEnabled: true})
	e, err := election.New(goredisadapter.New(c), election.Config{
		Name: name, NodeID: id, Prefix: s.cfg.prefix + "election:", TTL: s.cfg.lease, Hook: hook,
	})
	if err != nil {
		c.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	n := &node{id: id, client: c, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(n.done)
		_ = e.Run(ctx, s.leader(id, store)) // returns when ctx ends
	}()
	return n, nil
}

// stop ends the node's Run, which releases its lease, and closes its
// client. It is safe to call more than once.
func (n *node) stop() {
	n.stopOnce.Do(func() {
		n.cancel()
		<-n.done
		_ = n.client.Close()
	})
}

func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
