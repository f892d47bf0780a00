package robustness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/pgtest"
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

// target is a deployment: where its clients connect and the faults it can
// suffer.
type target struct {
	at     endpoint
	faults []fault
	relays []*redistest.Relay // one per election node, where relays fit
}

// relays starts a relay to s for each election node.
func relays(t *testing.T, s *redistest.Server, p plan) []*redistest.Relay {
	var rs []*redistest.Relay
	for range p.names * electionNodes {
		rs = append(rs, redistest.StartRelay(t, s.Addr()))
	}
	return rs
}

// relayedNodes gives each election node a connection of its own, on
// client, through its relay, which the node stalls while it pauses.
func relayedNodes(t *testing.T, client string, relays []*redistest.Relay) []Node {
	var nodes []Node
	for _, relay := range relays {
		nodes = append(nodes, Node{Client: connect(t, client, endpoint{addr: relay.Addr()}), Stall: relay.Stall, Resume: relay.Resume})
	}
	return nodes
}

// fault injects one fault; loss, when set, names the acknowledged state it
// may lose (recorded as a loss event over the fault's span); stops, that it
// stops a server, which runs what it had read when it resumes (recorded as
// a stop, history.go's unknownBound).
type fault struct {
	kind   string
	loss   bool
	stops  bool
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
	return fault{kind: "server SIGSTOP", stops: true, inject: func(t *testing.T, _ *Run) {
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
		return target{at: endpoint{addr: s.Addr(), rdb: s.Client(t)}, faults: []fault{clientKill(s), freeze(s), restart(s, "restart with persistence (AOF)", false)},
			relays: relays(t, s, p)}
	}},
	{name: "nopersist", setup: func(t *testing.T, p plan) target {
		s := redistest.Start(t, redistest.Own())
		return target{at: endpoint{addr: s.Addr(), rdb: s.Client(t)}, faults: []fault{restart(s, "restart without persistence", true), clientKill(s), freeze(s)},
			relays: relays(t, s, p)}
	}},
	{name: "sentinel", setup: func(t *testing.T, _ plan) target {
		sen := redistest.StartSentinel(t)
		return target{at: endpoint{sentinel: sen, rdb: sen.Client(t)}, faults: []fault{
			{kind: "Sentinel failover (SENTINEL FAILOVER)", loss: true, inject: func(t *testing.T, _ *Run) { sen.Failover(t) }},
			{kind: "Sentinel failover (primary SIGKILL)", loss: true, inject: func(t *testing.T, _ *Run) { sen.KillPrimary(t) }},
			{kind: "Sentinel failover (primary SIGSTOP)", loss: true, stops: true, inject: func(t *testing.T, _ *Run) { sen.FreezePrimary(t) }},
		}}
	}},
	{name: "cluster", setup: func(t *testing.T, _ plan) target {
		c := redistest.StartCluster(t)
		var faults []fault
		for _, kind := range []string{"account", "exports", "scheduler", "user"} {
			faults = append(faults, fault{kind: "Cluster slot migration", inject: func(t *testing.T, run *Run) {
				start := now()
				c.MoveSlot(t, "{"+run.Name(kind, 0)+"}", 0)
				run.H.AddMove(run.Name(kind, 0), start, now())
			}})
		}
		return target{at: endpoint{cluster: c, rdb: c.Client(t)}, faults: faults}
	}},
	{name: "lagging", setup: func(t *testing.T, _ plan) target {
		sen := redistest.StartSentinel(t)
		return target{at: endpoint{sentinel: sen, rdb: sen.Client(t)}, faults: []fault{
			{kind: laggingFailover, loss: true, inject: func(t *testing.T, run *Run) {
				fo := sen.KillPrimaryLagging(t, func() { time.Sleep(laggingFor) })
				run.W.Faults.Lag(fo.Behind)
				if fo.Behind <= 0 {
					t.Errorf("%s: the promoted replica was %d bytes behind: it was meant to lag", laggingFailover, fo.Behind)
				}
			}},
		}}
	}},
}

// laggingFailover is the fault of the lagging scenario, and laggingFor how
// long the primary takes writes its replicas never receive: two leases, so
// that locks are granted, written through and released meanwhile.
const (
	laggingFailover = "Sentinel failover to a lagging replica (replicas cut off, primary SIGKILL)"
	laggingFor      = 2 * leaseTTL
)

// plan is how long each scenario runs, in runs of what length, with how
// many names, and how often a fault comes.
type plan struct {
	budget, runLength, gap time.Duration
	names                  int
}

// runScenario runs sc under p, its k-th run on the (start+k)-th of the
// clients, and returns its results, its faults and its operations by
// client.
func runScenario(t *testing.T, sc scenario, p plan, start int, visDir string) ([]*Result, *Faults, map[string]int) {
	tg := sc.setup(t, p)
	pg, err := pgxpool.New(context.Background(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	faults := NewFaults()
	byClient := map[string]int{}
	connected := map[string]luascripts.Client{}
	nodes := map[string][]Node{}
	var results []*Result
	end := time.Now().Add(p.budget)
	next := 0
	for i := 0; i == 0 || time.Now().Add(p.runLength/2).Before(end); i++ {
		names := clientNames()
		client := names[(start+i)%len(names)]
		if connected[client] == nil {
			connected[client] = connect(t, client, tg.at)
			nodes[client] = relayedNodes(t, client, tg.relays)
		}
		run := NewRun(Workload{Scenario: fmt.Sprintf("%s#%d", sc.name, i), Client: connected[client], Redis: tg.at.rdb,
			Names: p.names, Pause: 0.03, Faults: faults, Nodes: nodes[client], PG: pg, CounterTokens: true})
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
			if f.stops {
				run.H.AddStop(start, now())
			}
		}
		time.Sleep(time.Until(runEnd))
		cancel()
		wait()
		rs := run.Check(visDir)
		for _, r := range rs {
			byClient[client] += r.Ops
		}
		results = merge(results, rs)
	}
	return results, faults, byClient
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
