package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/luascripts"
)

// The election parameters.
const (
	electionTTL   = 400 * time.Millisecond
	electionRenew = 100 * time.Millisecond
)

// Election holds the handover and failover timings, in milliseconds.
type Election struct {
	TTLms   float64 `json:"ttl_ms"`
	RenewMs float64 `json:"renew_interval_ms"`
	// Handover: the leader's Run context is cancelled (it releases) →
	// the follower's "elected" Event.
	Handover Stat `json:"handover_ms"`
	// Failover: the leader's calls stop reaching Redis (it neither renews
	// nor releases) → the follower's "elected" Event.
	Failover Stat `json:"failover_ms"`
	// Remaining is the lease's remaining TTL read from Redis right after
	// the stall: the least any failover can take.
	Remaining Stat `json:"remaining_at_stall_ms"`
	// FailoverExcess is Failover minus Remaining, trial by trial: how late
	// the follower took over after the lease expired.
	FailoverExcess Stat `json:"failover_minus_remaining_ms"`
}

// Stat summarises trials.
type Stat struct {
	N      int       `json:"n"`
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	All    []float64 `json:"all"`
}

func statOf(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Stat{N: len(s), Median: median(s), Min: s[0], Max: s[len(s)-1], All: xs}
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// stallClient is a client whose scripts can be made to hang until their
// context ends, as if the network between this node and Redis went silent:
// the node's process keeps running, but none of its renewals (and no
// release) reach the server. Its other calls go through.
type stallClient struct {
	election.Client
	stalled atomic.Bool
}

func (c *stallClient) Eval(ctx context.Context, calls []luascripts.Call) {
	if !c.stalled.Load() {
		c.Client.Eval(ctx, calls)
		return
	}
	<-ctx.Done()
	for i := range calls {
		calls[i].Reply, calls[i].Err = nil, ctx.Err()
	}
}

func (c *stallClient) EvalWait(ctx context.Context, call *luascripts.Call, replicas int, timeout time.Duration) (int, error) {
	if !c.stalled.Load() {
		return c.Client.EvalWait(ctx, call, replicas, timeout)
	}
	<-ctx.Done()
	call.Reply, call.Err = nil, ctx.Err()
	return 0, ctx.Err()
}

// node is one Elector running in the background, its transitions timed.
type node struct {
	e       *election.Elector
	elected chan time.Time
	follows chan struct{}
	cancel  context.CancelFunc
	done    chan error
	once    sync.Once
}

func startNode(ctx context.Context, c election.Client, cfg election.Config) (*node, error) {
	n := &node{elected: make(chan time.Time, 4), follows: make(chan struct{}, 4), done: make(chan error, 1)}
	cfg.Hook = func(_ context.Context, e election.Event) {
		switch e.Op {
		case "elected":
			select {
			case n.elected <- time.Now():
			default:
			}
		case "follower":
			select {
			case n.follows <- struct{}{}:
			default:
			}
		}
	}
	e, err := election.New(c, cfg)
	if err != nil {
		return nil, err
	}
	n.e = e
	ctx, n.cancel = context.WithCancel(ctx)
	go func() { n.done <- e.Run(ctx, nil) }()
	return n, nil
}

// stop ends the node's Run and waits for it to return; again, it does
// nothing.
func (n *node) stop() {
	n.once.Do(func() {
		n.cancel()
		<-n.done
	})
}

// waitFor returns the value ch yields within d.
func waitFor[T any](ctx context.Context, ch <-chan T, d time.Duration, what string) (T, error) {
	var zero T
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case v := <-ch:
		return v, nil
	case <-t.C:
		return zero, fmt.Errorf("bench: election: %s did not happen within %v", what, d)
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

func (r *runner) electionConfig(name string) election.Config {
	return election.Config{Name: name, TTL: electionTTL, RenewInterval: electionRenew, Prefix: r.cfg.Prefix + "election:"}
}

// election measures cfg.Trials clean handovers and as many failovers, each
// between two fresh nodes on a fresh election name.
func (r *runner) election(ctx context.Context) (*Election, error) {
	res := &Election{TTLms: msOf(electionTTL), RenewMs: msOf(electionRenew)}
	var handovers, failovers, remaining, excess []float64
	for i := range r.cfg.Trials {
		d, err := r.handover(ctx, "handover-"+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		handovers = append(handovers, msOf(d))
	}
	r.cfg.logf("  election handover: %v", handovers)
	for i := range r.cfg.Trials {
		// Where the stall falls between two renewals, spread over trials.
		phase := time.Duration(rand.Int64N(int64(electionRenew)))
		d, left, err := r.failover(ctx, "failover-"+strconv.Itoa(i), phase)
		if err != nil {
			return nil, err
		}
		failovers = append(failovers, msOf(d))
		remaining = append(remaining, msOf(left))
		excess = append(excess, msOf(d-left))
	}
	r.cfg.logf("  election failover: %v (lease remaining at the stall: %v)", failovers, remaining)
	res.Handover, res.Failover = statOf(handovers), statOf(failovers)
	res.Remaining, res.FailoverExcess = statOf(remaining), statOf(excess)
	return res, nil
}

// handover elects a leader, lets a follower see it, stops the leader and
// times the follower's election from the stop.
func (r *runner) handover(ctx context.Context, name string) (time.Duration, error) {
	leader, err := startNode(ctx, goredisadapter.New(r.client()), r.electionConfig(name))
	if err != nil {
		return 0, err
	}
	defer leader.stop()
	if _, err := waitFor(ctx, leader.elected, 5*time.Second, "the first election"); err != nil {
		return 0, err
	}
	follower, err := startNode(ctx, goredisadapter.New(r.client()), r.electionConfig(name))
	if err != nil {
		return 0, err
	}
	defer follower.stop()
	if _, err := waitFor(ctx, follower.follows, 5*time.Second, "the follower's first refusal"); err != nil {
		return 0, err
	}
	stopped := time.Now()
	leader.stop()
	won, err := waitFor(ctx, follower.elected, 5*electionTTL, "the handover")
	if err != nil {
		return 0, err
	}
	return won.Sub(stopped), nil
}

// failover elects a leader, lets a follower see it, waits phase, then
// stalls the leader's client. It returns the time from the stall to the
// follower's election, and the lease's remaining TTL read just after the
// stall.
func (r *runner) failover(ctx context.Context, name string, phase time.Duration) (took, left time.Duration, err error) {
	sc := &stallClient{Client: goredisadapter.New(r.client())}
	leader, err := startNode(ctx, sc, r.electionConfig(name))
	if err != nil {
		return 0, 0, err
	}
	defer leader.stop()
	if _, err := waitFor(ctx, leader.elected, 5*time.Second, "the first election"); err != nil {
		return 0, 0, err
	}
	follower, err := startNode(ctx, goredisadapter.New(r.client()), r.electionConfig(name))
	if err != nil {
		return 0, 0, err
	}
	defer follower.stop()
	if _, err := waitFor(ctx, follower.follows, 5*time.Second, "the follower's first refusal"); err != nil {
		return 0, 0, err
	}
	time.Sleep(phase)
	stalled := time.Now()
	sc.stalled.Store(true)
	info, err := follower.e.Leader(ctx)
	if err != nil {
		return 0, 0, err
	}
	// Read just after the stall, and truncated to the millisecond by
	// Redis: taken as the remaining time at the stall, it errs early, so
	// the failover's excess over it errs long, against the target.
	left = info.TTL
	won, err := waitFor(ctx, follower.elected, 5*electionTTL, "the failover")
	if err != nil {
		return 0, 0, err
	}
	return won.Sub(stalled), left, nil
}
