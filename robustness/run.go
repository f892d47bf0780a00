package robustness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis/go-redis/v9"
)

// Mutation names a broken version the harness runs in place of a
// primitive, to show that the checker catches it.
type Mutation string

// The mutations, each the naive version of one primitive.
const (
	// FenceAcceptsAnyToken writes with a plain SET, and to PostgreSQL with
	// a plain UPDATE: no token compared.
	FenceAcceptsAnyToken Mutation = "fence that accepts any token"
	// LockWithoutFencing is naivelock: SET NX PX and a bare DEL.
	LockWithoutFencing Mutation = "lock without fencing (SET NX, bare DEL)"
	// SemaphoreWithoutLeases is naivesemaphore: INCR and DECR.
	SemaphoreWithoutLeases Mutation = "semaphore without leases (INCR/DECR)"
	// ElectionWithoutFencing has leaders write with a plain SET.
	ElectionWithoutFencing Mutation = "election whose leaders write without the epoch"
	// LimiterThatDoesNotCount is naiveratelimit's sliding window: it trims,
	// counts and records in three round trips.
	LimiterThatDoesNotCount Mutation = "limiter that counts before it records (3 round trips)"
)

// Workload is what the clients of one run do.
type Workload struct {
	// Scenario names the run (the fault kinds it injects).
	Scenario string
	// Client is the adapter every primitive runs on; Redis is the same
	// client, for the naive versions, which run on go-redis directly.
	Client luascripts.Client
	Redis  redis.UniversalClient
	// Names is how many locks, semaphores, elections and limiter keys run
	// at once, each a history of its own.
	Names int
	// Pause is the probability that a holder pauses past its lease before
	// its next write (a client stopped as by SIGSTOP).
	Pause float64
	// PG, when set, is a PostgreSQL database the lock holders also write
	// to through pgfence, on rows of their own ("pgfence" histories).
	PG *pgxpool.Pool
	// Nodes, when set, are the election nodes' own connections, one per
	// node (Names × electionNodes), each through a relay the node stalls
	// while it pauses: its renewals stop with it, as when its process is
	// stopped by SIGSTOP. Without them a pausing leader's lease goes on
	// being renewed in the background and it is never stale.
	Nodes []Node
	// CounterTokens adds as many lock names again, held by Lockers
	// WithCounterTokens, whose tokens a loss of the counter sends back.
	CounterTokens bool
	// Mutation, when set, replaces one primitive with its naive version.
	Mutation Mutation
	// Models limits the workload to these models ("" runs all).
	Models map[string]bool
	// Faults counts the client-side faults (pauses) the run made.
	Faults *Faults
}

// Node is one election node's connection, and how to stop and resume it.
type Node struct {
	Client        luascripts.Client
	Stall, Resume func()
}

// The timings of the workload: short leases so that faults of a fraction
// of a second outlast them.
const (
	leaseTTL     = 250 * time.Millisecond
	callTimeout  = 500 * time.Millisecond
	semCapacity  = 2
	limitN       = 10
	limitWindow  = 200 * time.Millisecond
	electionTTL  = 300 * time.Millisecond
	opPauseLimit = 5 * time.Millisecond
)

// Run holds one run's recorded histories.
type Run struct {
	W         Workload
	H         *History
	mu        sync.Mutex
	decisions map[string][]Decision
	terms     map[string][]Term
}

// NewRun returns an empty run of w.
func NewRun(w Workload) *Run {
	if w.Faults == nil {
		w.Faults = NewFaults()
	}
	return &Run{W: w, H: NewHistory(), decisions: map[string][]Decision{}, terms: map[string][]Term{}}
}

func (r *Run) wants(model string) bool { return len(r.W.Models) == 0 || r.W.Models[model] }

// part names a history: model, scenario, key.
func (r *Run) part(model, key string) string { return model + "/" + r.W.Scenario + "/" + key }

// Name is the name of the n-th lock ("account"), semaphore ("exports"),
// election ("scheduler") or limited key ("user") of this run. It is the
// run's own: a run that found the state an earlier run on the same server
// left (a value, a mark, a live permit) would be judged against a model
// that starts empty.
func (r *Run) Name(kind string, n int) string {
	return fmt.Sprintf("%s-%d.%s", kind, n, strings.NewReplacer("#", "-", "/", "-").Replace(r.W.Scenario))
}

// Start runs the clients until ctx ends; wait waits for every one of them.
func (r *Run) Start(ctx context.Context) (wait func(), err error) {
	var wg sync.WaitGroup
	var starts []func(context.Context, *sync.WaitGroup) error
	if r.wants("lock") || r.wants("fence") {
		starts = append(starts, r.startLocks)
	}
	if r.wants("semaphore") {
		starts = append(starts, r.startSemaphores)
	}
	if r.wants("election") {
		starts = append(starts, r.startElections)
	}
	if r.wants("ratelimit") {
		starts = append(starts, r.startLimiters)
	}
	for _, s := range starts {
		if err := s(ctx, &wg); err != nil {
			return wg.Wait, err
		}
	}
	return wg.Wait, nil
}

// call records the outcome of one call (Return ret, pending when unknown) the outcome of one call in part, taking a new client id
// after an unknown outcome.
func (r *Run) call(model, part string, client *int, in any, call, ret int64, out any) {
	r.H.Add(model, part, *client, in, call, ret, out)
	if ret == pending {
		*client = r.H.Client()
	}
}

// pause sleeps past a lease of ttl with probability W.Pause, as a client
// stopped by SIGSTOP; it reports whether it did.
func (r *Run) pause(ctx context.Context, ttl time.Duration) bool {
	return r.pauseNode(ctx, ttl, Node{})
}

// pauseNode is pause for a node whose connection stalls with it.
func (r *Run) pauseNode(ctx context.Context, ttl time.Duration, n Node) bool {
	if r.W.Pause == 0 || rand.Float64() >= r.W.Pause {
		return false
	}
	r.W.Faults.Add("client paused past its lease")
	if n.Stall != nil {
		n.Stall()
		defer n.Resume()
	}
	sleep(ctx, 2*ttl)
	return true
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// jitter is a short pause between calls, which keeps the CPU modest.
func jitter(ctx context.Context) { sleep(ctx, time.Duration(rand.Int64N(int64(opPauseLimit)))) }

func withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
}

// id is a unique operation id within a run.
func id(kind string, worker, seq int) string { return fmt.Sprintf("%s%d.%d", kind, worker, seq) }

// is reports whether err is one of the targets.
func is(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
