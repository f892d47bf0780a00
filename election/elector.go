package election

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/lock"
)

// Client is a Redis client through its adapter module:
// goredisadapter.New(rdb) for go-redis, rueidisadapter.New(rc) for
// rueidis, valkeyadapter.New(vc) for valkey-go. It is package lock's
// Client: an Elector runs its lease (lock) and its fence on it, and its
// followers subscribe with it, so that a release wakes them. On go-redis,
// set ContextTimeoutEnabled in the client's options, so a call to a frozen
// server ends at the context's deadline and not only at ReadTimeout:
// stepping down does not depend on it, but how soon a demoted node
// re-contends, and how soon Run returns, do.
type Client = lock.Client

// minWaitBackoff is the shortest pause between a waiting follower's
// fallback attempts.
const minWaitBackoff = 25 * time.Millisecond

// Elector is one node of an election. Make it with New, run it with Run.
// Its methods are safe for concurrent use. Those of an Elector not made by
// New (its zero value) that return an error return ErrNilClient.
type Elector struct {
	cfg    Config
	locker *lock.Locker
	fence  *fence.Store

	running atomic.Bool

	mu     sync.Mutex
	term   Term
	keeper *lock.Keeper // non-nil while this node holds a term
	ctl    *termCtl     // non-nil while this node holds a term

	seen LeaderInfo // the last term this node saw, for "leader_change"

	hookMu sync.Mutex // Config.Hook is called one event at a time

	reach reach // whether this node's attempts reach Redis, for Healthy
}

// reach is what Healthy knows of this node's attempts to take the lease,
// from package lock's report of each (lockEvent).
type reach struct {
	mu sync.Mutex
	// since is, while this node contends, when Redis last answered one of
	// its attempts, or when it began to contend if none was answered since;
	// zero while it leads, and when Run is not running (unless Run returned
	// an attempt's error).
	since time.Time
	err   error // the last failed attempt's error, since then
}

// termCtl lets Resign end a term and wait for its end.
type termCtl struct {
	resign chan struct{} // closed by the first Resign
	once   sync.Once
	done   chan struct{} // closed once the term has ended and its lease is released
}

// New returns an Elector for cfg on client. It makes no round trip. It fails
// with ErrNilClient for a nil client, and ErrInvalidConfig (with
// ErrRenewInterval for a RenewInterval above TTL/2) for a bad cfg.
func New(client Client, cfg Config) (*Elector, error) {
	if luascripts.IsNil(client) {
		return nil, ErrNilClient
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Elector{cfg: cfg}
	opts := []lock.Option{
		lock.WithHook(e.lockEvent),
		lock.WithPrefix(cfg.Prefix),
		lock.WithOwner(ownerLabel(cfg.NodeID, cfg.Value)),
		// A waiting follower's fallback retry, when no release notification
		// or expiry wakes it first, is never later than RetryInterval.
		lock.WithWaitBackoff(min(minWaitBackoff, cfg.RetryInterval), cfg.RetryInterval),
	}
	if cfg.SafetyMargin != 0 {
		opts = append(opts, lock.WithSafetyMargin(cfg.SafetyMargin))
	}
	locker, err := lock.New(client, opts...)
	if err != nil {
		return nil, &configError{detail: "the lease", cause: err}
	}
	store := cfg.Fence
	if store == nil {
		if store, err = fence.New(client); err != nil {
			return nil, &configError{detail: "the fence", cause: err}
		}
	}
	e.locker, e.fence = locker, store
	return e, nil
}

// ready refuses the calls of an Elector not made by New (its zero value),
// which has no client, with ErrNilClient.
func (e *Elector) ready() error {
	if e == nil || e.locker == nil {
		return ErrNilClient
	}
	return nil
}

// lockEvent keeps, from package lock's report of each attempt to take the
// lease (Acquire, and each attempt of AcquireWait), when Redis last
// answered one: acquired or refused. A failed attempt (not reached, or
// refused to this node) is kept for Healthy to quote, unless Run's context
// ended it.
func (e *Elector) lockEvent(ctx context.Context, ev lock.Event) {
	e.reportLock(ctx, ev)
	if ev.Op != "acquire" {
		return
	}
	now := time.Now()
	e.reach.mu.Lock()
	defer e.reach.mu.Unlock()
	switch {
	case e.reach.since.IsZero(): // not contending: an attempt of Resign's or lead's, or none of Run's
	case ev.Outcome != "error":
		e.reach.since, e.reach.err = now, nil
	case ctx.Err() == nil:
		e.reach.err = ev.Err
	}
}

// contending starts (at now) or ends (zero) the clock Healthy reads.
func (e *Elector) contending(since time.Time) {
	e.reach.mu.Lock()
	e.reach.since, e.reach.err = since, nil
	e.reach.mu.Unlock()
}

// unanswered returns since when Redis has answered none of this node's
// attempts, and the last failed one's error; a zero time while this node
// does not contend.
func (e *Elector) unanswered() (time.Time, error) {
	e.reach.mu.Lock()
	defer e.reach.mu.Unlock()
	return e.reach.since, e.reach.err
}

// NodeID returns this node's id (Config.NodeID, or the default made for it).
func (e *Elector) NodeID() string { return e.cfg.NodeID }

// IsLeader reports whether this node leads right now, as far as it can
// prove: it holds a term and the term's local deadline (the send time of the
// last successful renewal + TTL - SafetyMargin) has not passed. It turns
// false at that deadline by the clock, even before the renewal goroutine
// has noticed, and so also at once when a paused process wakes up.
//
// IsLeader is advisory: for display, metrics, health checks. NEVER make a
// correctness-sensitive write depend on it ("if e.IsLeader() { write }"):
// leadership can end between the check and the write, and a process can be
// paused between them for any length of time, while another node is elected
// and writes. That is the split-brain window, and only a write that carries
// the epoch to a resource that checks it (Term.Fencer) is safe in it.
func (e *Elector) IsLeader() bool {
	_, ok := e.Term()
	return ok
}

// Term returns the current term and true while IsLeader would report true.
// Other goroutines use it to make fenced writes in the leader's name: the
// write carries the epoch, so acting on a snapshot that has since gone stale
// is safe, because the resource refuses it once a newer term has written.
func (e *Elector) Term() (Term, bool) {
	e.mu.Lock()
	term, k := e.term, e.keeper
	e.mu.Unlock()
	if k == nil || k.Context().Err() != nil || !time.Now().Before(k.Deadline()) {
		return Term{}, false
	}
	return term, true
}

// Epoch returns the current term's epoch, as Term does.
func (e *Elector) Epoch() (int64, bool) {
	t, ok := e.Term()
	return t.Epoch, ok
}

// Leader asks Redis who leads, without contending: for followers and
// observers, which may use an Elector they never Run. It returns
// ErrNoLeader when nobody holds the lease. The answer may be stale by the
// time it arrives; never decide to write on it.
func (e *Elector) Leader(ctx context.Context) (LeaderInfo, error) {
	if err := e.ready(); err != nil {
		return LeaderInfo{}, err
	}
	h, err := e.locker.Holder(ctx, e.cfg.Name)
	if err != nil {
		return LeaderInfo{}, fmt.Errorf("election: leader of %q: %w", e.cfg.Name, err)
	}
	if !h.Held {
		return LeaderInfo{}, fmt.Errorf("%w: %q", ErrNoLeader, e.cfg.Name)
	}
	return leaderInfo(h.Owner, h.Token, h.TTL), nil
}

func (e *Elector) setTerm(t Term, k *lock.Keeper, ctl *termCtl) {
	e.mu.Lock()
	e.term, e.keeper, e.ctl = t, k, ctl
	e.mu.Unlock()
}

func (e *Elector) clearTerm() { e.setTerm(Term{}, nil, nil) }

// Resign ends this node's current term as if fn had returned nil
// (ReasonResigned): fn's context is cancelled, and once fn has returned the
// lease is released, so a follower is elected at once, and this node sits
// out one RetryInterval before contending again. Resign returns when the
// lease is released, or with ctx's error if ctx ends first (the term ends
// anyway). It returns ErrNotLeading when this node holds no term.
//
// etcd's Election.Resign; here the same as returning from fn, for code
// outside fn.
func (e *Elector) Resign(ctx context.Context) error {
	if err := e.ready(); err != nil {
		return err
	}
	e.mu.Lock()
	ctl := e.ctl
	e.mu.Unlock()
	if ctl == nil {
		return fmt.Errorf("%w: %q", ErrNotLeading, e.cfg.Name)
	}
	ctl.once.Do(func() { close(ctl.resign) })
	select {
	case <-ctl.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("election: resign %q: %w", e.cfg.Name, ctx.Err())
	}
}

// see reports leader ("leader_change") if it is a term this node has not
// seen yet. Only one goroutine of Run calls it at a time.
func (e *Elector) see(ctx context.Context, leader LeaderInfo) {
	if leader.Epoch == e.seen.Epoch && leader.NodeID == e.seen.NodeID {
		return
	}
	e.seen = leader
	e.report(ctx, Event{Op: opLeaderChange, Outcome: outcomeOK, Epoch: leader.Epoch, Leader: leader})
}

// heldBy turns a refusal into who leads.
func heldBy(err error) (LeaderInfo, bool) {
	var held *lock.HeldError
	if !errors.As(err, &held) {
		return LeaderInfo{}, false
	}
	return leaderInfo(held.Owner, held.Token, held.TTL), true
}
