package robustness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/pgtest"
	"github.com/redis/go-redis/v9"
)

// A scenario is one kind of deployment and the faults injected into it.
// It starts its servers through internal/redistest, then runs the
// workload in runs of runLength until budget is spent, injecting a fault
// every gap from the test's goroutine (the fixtures fail the test on a
// fault that could not be made, which only that goroutine may do).
type scenario struct {
	name  string
	setup func(t *testing.T, p plan) target
}

// target is a deployment: its client and the faults it can suffer.
type target struct {
	rdb    redis.UniversalClient
	faults []fault
	nodes  []Node // election nodes' stallable connections, where relays fit
}

// relayedNodes gives each election node a connection of its own through a
// relay to s, which the node stalls while it pauses.
func relayedNodes(t *testing.T, s *redistest.Server, p plan) []Node {
	var nodes []Node
	for range p.names * electionNodes {
		relay := redistest.StartRelay(t, s.Addr())
		rdb := redis.NewClient(&redis.Options{Addr: relay.Addr(), ContextTimeoutEnabled: true, DisableIdentity: true})
		t.Cleanup(func() { _ = rdb.Close() })
		nodes = append(nodes, Node{Client: goredisadapter.New(rdb), Stall: relay.Stall, Resume: relay.Resume})
	}
	return nodes
}

// fault injects one fault; loss, when set, names the acknowledged state it
// may lose (recorded as a loss event over the fault's span).
type fault struct {
	kind   string
	loss   bool
	inject func(t *testing.T, run *Run)
}

// clientKill kills every client connection for a moment: the clients'
// default retries meet it.
func clientKill(s *redistest.Server) fault {
	return fault{kind: "CLIENT KILL", inject: func(t *testing.T, _ *Run) {
		stop := s.KillClients(t, 25*time.Millisecond)
		time.Sleep(150 * time.Millisecond)
		stop()
	}}
}

// freeze stops the server with SIGSTOP for longer than every lease.
func freeze(s *redistest.Server) fault {
	return fault{kind: "server SIGSTOP", inject: func(t *testing.T, _ *Run) {
		s.Freeze(t)
		time.Sleep(time.Duration(400+rand.IntN(600)) * time.Millisecond)
		s.Thaw(t)
	}}
}

func restart(s *redistest.Server, kind string, loss bool) fault {
	return fault{kind: kind, loss: loss, inject: func(t *testing.T, _ *Run) { s.Restart(t) }}
}

var scenarios = []scenario{
	{name: "aof", setup: func(t *testing.T, p plan) target {
		// appendfsync always: a restart loses nothing acknowledged.
		s := redistest.Start(t, redistest.Own(), redistest.Args("--appendonly", "yes", "--appendfsync", "always"))
		return target{rdb: s.Client(t), faults: []fault{clientKill(s), freeze(s), restart(s, "restart with persistence (AOF)", false)},
			nodes: relayedNodes(t, s, p)}
	}},
	{name: "nopersist", setup: func(t *testing.T, p plan) target {
		s := redistest.Start(t, redistest.Own())
		return target{rdb: s.Client(t), faults: []fault{restart(s, "restart without persistence", true), clientKill(s), freeze(s)},
			nodes: relayedNodes(t, s, p)}
	}},
	{name: "sentinel", setup: func(t *testing.T, _ plan) target {
		sen := redistest.StartSentinel(t)
		return target{rdb: sen.Client(t), faults: []fault{
			{kind: "Sentinel failover (SENTINEL FAILOVER)", loss: true, inject: func(t *testing.T, _ *Run) { sen.Failover(t) }},
			{kind: "Sentinel failover (primary SIGKILL)", loss: true, inject: func(t *testing.T, _ *Run) { sen.KillPrimary(t) }},
			{kind: "Sentinel failover (primary SIGSTOP)", loss: true, inject: func(t *testing.T, _ *Run) { sen.FreezePrimary(t) }},
		}}
	}},
	{name: "cluster", setup: func(t *testing.T, _ plan) target {
		c := redistest.StartCluster(t)
		var faults []fault
		for _, kind := range []string{"account", "exports", "scheduler", "user"} {
			faults = append(faults, fault{kind: "Cluster slot migration", inject: func(t *testing.T, run *Run) {
				c.MoveSlot(t, "{"+run.Name(kind, 0)+"}", 0)
			}})
		}
		return target{rdb: c.Client(t), faults: faults}
	}},
}

// plan is how long each scenario runs, in runs of what length, with how
// many names, and how often a fault comes.
type plan struct {
	budget, runLength, gap time.Duration
	names                  int
}

// runScenario runs sc under p and returns its results and its faults.
func runScenario(t *testing.T, sc scenario, p plan, visDir string) ([]*Result, *Faults) {
	tg := sc.setup(t, p)
	pg, err := pgxpool.New(context.Background(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	faults := NewFaults()
	var results []*Result
	end := time.Now().Add(p.budget)
	next := 0
	for i := 0; i == 0 || time.Now().Add(p.runLength/2).Before(end); i++ {
		run := NewRun(Workload{Scenario: fmt.Sprintf("%s#%d", sc.name, i), Client: goredisadapter.New(tg.rdb), Redis: tg.rdb,
			Names: p.names, Pause: 0.03, Faults: faults, Nodes: tg.nodes, PG: pg})
		ctx, cancel := context.WithCancel(context.Background())
		wait, err := run.Start(ctx)
		if err != nil {
			cancel()
			wait()
			t.Fatal(err)
		}
		runEnd := time.Now().Add(p.runLength)
		for time.Now().Add(p.gap).Before(runEnd) {
			time.Sleep(p.gap)
			f := tg.faults[next%len(tg.faults)]
			next++
			start := now()
			f.inject(t, run)
			faults.Add(f.kind)
			if f.loss {
				run.H.AddLoss(f.kind, start, now())
			}
		}
		time.Sleep(time.Until(runEnd))
		cancel()
		wait()
		results = merge(results, run.Check(visDir))
	}
	return results, faults
}

// merge adds each of rs to the result of the same model in into.
func merge(into, rs []*Result) []*Result {
	for _, r := range rs {
		found := false
		for _, x := range into {
			if x.Model == r.Model {
				x.Add(r)
				found = true
			}
		}
		if !found {
			c := newResult(r.Model)
			c.Add(r)
			into = append(into, c)
		}
	}
	return into
}
