package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// The lease of every election in the demo, how often a leader renews it, and
// how long the split-brain scenario freezes the old leader's process.
const (
	electLease  = 400 * time.Millisecond
	electRenew  = 100 * time.Millisecond
	electFreeze = 1500 * time.Millisecond
)

// leaderElection measures a clean handover, a failover after the leader's
// process is killed, and the split-brain window of a leader whose process
// is frozen (SIGSTOP) for longer than its lease; and checks that the old
// leader's write on waking is refused by its epoch.
func leaderElection(ctx context.Context, d *demo, row *Row, rep *Report) error {
	h, err := cleanHandover(ctx, d)
	if err != nil {
		return fmt.Errorf("clean handover: %w", err)
	}
	row.add("measure", fmt.Sprintf("clean handover %s", fmtMs(h.took)), map[string]any{
		"handover_ms": ms(h.took), "lease_ms": ms(electLease), "renew_ms": ms(electRenew),
		"old_epoch": h.old, "new_epoch": h.next,
	})
	row.expect(h.took < electLease/2, "the clean handover took %v: a released lease should pass on far sooner than the %v lease", h.took, electLease)
	row.expect(h.next > h.old, "handover: new epoch %d not above %d", h.next, h.old)

	f, err := crashFailover(ctx, d)
	if err != nil {
		return fmt.Errorf("failover: %w", err)
	}
	row.add("measure", fmt.Sprintf("failover %s (lease %s)", fmtMs(f.took), fmtMs(electLease)), map[string]any{
		"failover_ms": ms(f.took), "lease_ms": ms(electLease), "renew_ms": ms(electRenew),
		"old_epoch": f.old, "new_epoch": f.next,
	})
	// A killed leader releases nothing: its successor waits for the lease,
	// whose last renewal can be up to one renew interval old.
	row.expect(f.took >= electLease-electRenew-5*time.Millisecond, "failover took %v, sooner than the lease allows (%v - %v)", f.took, electLease, electRenew)
	row.expect(f.took <= electLease+time.Second, "failover took %v, far past the %v lease", f.took, electLease)
	row.expect(f.next > f.old, "failover: new epoch %d not above %d", f.next, f.old)

	s, err := splitBrain(ctx, d)
	if err != nil {
		return fmt.Errorf("split brain: %w", err)
	}
	rep.Timelines = append(rep.Timelines, s.timeline)
	row.add("failure", fmt.Sprintf("split-brain window %s (lease %s, freeze %s)", fmtMs(s.window), fmtMs(electLease), fmtMs(electFreeze)), map[string]any{
		"window_ms": ms(s.window), "lease_ms": ms(electLease), "freeze_ms": ms(electFreeze),
		"failover_while_frozen_ms": ms(s.failover), "stepped_down_after_thaw_ms": ms(s.afterThaw),
		"old_reason": s.reason, "old_is_leader_on_waking": s.wokeLeader,
	})
	text := fmt.Sprintf("old leader's write %s", s.staleResult)
	if s.refusedBy > 0 {
		text = fmt.Sprintf("old leader's write refused (epoch %d < %d)", s.old, s.refusedBy)
	}
	row.add("fix", text, map[string]any{
		"refused": s.refusedBy > 0, "old_epoch": s.old, "new_epoch": s.next, "final_value": s.final,
	})
	row.expect(s.window > electLease, "split-brain window %v, expected longer than the %v lease (the freeze was %v)", s.window, electLease, electFreeze)
	row.expect(s.refusedBy == s.next, "the old leader's first write on waking was %s, want refused by epoch %d", s.staleResult, s.next)
	row.expect(s.final == s.nextValue, "data after the old leader woke: %q, want the new leader's %q", s.final, s.nextValue)
	row.expect(s.reason == "deadline_passed", "old leader stepped down for %s, want deadline_passed", s.reason)
	row.expect(s.wokeLeader == "false", "old leader's IsLeader on waking was %s, want false", s.wokeLeader)
	row.expect(s.stillLeading, "the new leader lost its lease while the old one woke")
	return nil
}

// node is an Elector run by this process.
type node struct {
	e        *election.Elector
	cancel   context.CancelFunc
	done     chan error
	stopOnce sync.Once
	stopErr  error
	elected  chan stamped[int64]
	follower chan stamped[election.LeaderInfo]
}

type stamped[T any] struct {
	v  T
	at time.Time
}

func (d *demo) electionConfig(name, id string) election.Config {
	return election.Config{
		Name: name, NodeID: id, Prefix: d.prefix + "election:",
		TTL: electLease, RenewInterval: electRenew, RetryInterval: electRenew,
	}
}

// startNode runs an Elector for cfg. Its Hook must not
// block, so events go to buffered channels and overflow is dropped (the
// scenarios wait for the first few only).
func startNode(ctx context.Context, d *demo, cfg election.Config, fn func(context.Context, election.Term) error) (*node, error) {
	n := &node{
		done:     make(chan error, 1),
		elected:  make(chan stamped[int64], 16),
		follower: make(chan stamped[election.LeaderInfo], 16),
	}
	cfg.Hook = func(_ context.Context, e election.Event) {
		switch e.Op {
		case "elected":
			send(n.elected, stamped[int64]{e.Epoch, time.Now()})
		case "follower":
			send(n.follower, stamped[election.LeaderInfo]{e.Leader, time.Now()})
		}
	}
	e, err := election.New(goredisadapter.New(d.client()), cfg)
	if err != nil {
		return nil, err
	}
	n.e = e
	ctx, n.cancel = context.WithCancel(ctx)
	go func() { n.done <- e.Run(ctx, fn) }()
	return n, nil
}

func send[T any](ch chan T, v T) {
	select {
	case ch <- v:
	default:
	}
}

// recv waits for a value on ch, ctx's end, or within.
func recv[T any](ctx context.Context, ch <-chan T, within time.Duration, what string) (T, error) {
	var zero T
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case v := <-ch:
		return v, nil
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-t.C:
		return zero, fmt.Errorf("%s: not within %v", what, within)
	}
}

// stop ends the node's Run and waits for it (it releases any lease first).
// It is safe to call more than once.
func (n *node) stop() error {
	n.stopOnce.Do(func() {
		n.cancel()
		select {
		case err := <-n.done:
			if err != nil && !errors.Is(err, context.Canceled) {
				n.stopErr = err
			}
		case <-time.After(10 * time.Second):
			n.stopErr = errors.New("election Run did not return within 10s of its context ending")
		}
	})
	return n.stopErr
}

type handover struct {
	took      time.Duration
	old, next int64
}

// cleanHandover: a leader stops (its Run's context ends), releases its
// lease, and the release wakes the follower at once.
func cleanHandover(ctx context.Context, d *demo) (handover, error) {
	var h handover
	name := "handover-" + randomHex(3)
	a, err := startNode(ctx, d, d.electionConfig(name, "node-a"), nil)
	if err != nil {
		return h, err
	}
	defer a.stop()
	ea, err := recv(ctx, a.elected, 5*time.Second, "node a elected")
	if err != nil {
		return h, err
	}
	b, err := startNode(ctx, d, d.electionConfig(name, "node-b"), nil)
	if err != nil {
		return h, err
	}
	defer b.stop()
	if _, err := recv(ctx, b.follower, 5*time.Second, "node b following"); err != nil {
		return h, err
	}
	stopped := time.Now()
	if err := a.stop(); err != nil {
		return h, err
	}
	eb, err := recv(ctx, b.elected, 5*time.Second, "node b elected")
	if err != nil {
		return h, err
	}
	h.took, h.old, h.next = eb.at.Sub(stopped), ea.v, eb.v
	return h, b.stop()
}

// crashFailover: the leader is a child process, killed with SIGKILL. It
// releases nothing; the follower in this process takes over when the lease
// expires.
func crashFailover(ctx context.Context, d *demo) (handover, error) {
	var h handover
	name := "failover-" + randomHex(3)
	ch, err := startChild(d.childConfig(name))
	if err != nil {
		return h, err
	}
	defer ch.Stop()
	el, _, err := ch.Wait(ctx, 10*time.Second, 0, "elected", nil)
	if err != nil {
		return h, err
	}
	p, err := startNode(ctx, d, d.electionConfig(name, "parent"), nil)
	if err != nil {
		return h, err
	}
	defer p.stop()
	if _, err := recv(ctx, p.follower, 5*time.Second, "parent following"); err != nil {
		return h, err
	}
	killed := time.Now()
	if err := ch.Kill(); err != nil {
		return h, err
	}
	won, err := recv(ctx, p.elected, electLease+5*time.Second, "parent elected after the kill")
	if err != nil {
		return h, err
	}
	h.took, h.old, h.next = won.at.Sub(killed), el.Int("epoch"), won.v
	return h, p.stop()
}

func (d *demo) childConfig(name string) redistest.LeaderConfig {
	return redistest.LeaderConfig{
		Addr: d.addr, Prefix: d.prefix + "election:", Name: name,
		Key: d.prefix + "{" + name + "}:data", TTL: electLease, Renew: electRenew,
	}
}

type splitResult struct {
	window, failover, afterThaw time.Duration
	old, next                   int64
	reason, wokeLeader          string
	staleResult                 string
	refusedBy                   int64 // the highest epoch named by the refusal; 0 if not refused
	final, nextValue            string
	stillLeading                bool
	timeline                    *Timeline
}

// splitBrain: the old leader is a child process writing with its epoch
// every 10 ms. It is frozen with SIGSTOP for longer than its lease; this
// process is elected and writes with the new epoch. On SIGCONT the old
// leader writes with its old epoch before it notices anything, and is
// refused; then it steps down. Between this process's election and that
// step-down, both believed they led.
func splitBrain(ctx context.Context, d *demo) (splitResult, error) {
	var r splitResult
	name := "splitbrain-" + randomHex(3)
	cfg := d.childConfig(name)
	ch, err := startChild(cfg)
	if err != nil {
		return r, err
	}
	defer ch.Stop()
	el, _, err := ch.Wait(ctx, 10*time.Second, 0, "elected", nil)
	if err != nil {
		return r, err
	}
	r.old = el.Int("epoch")
	// Let the old leader lead for a while, so its accepted writes show.
	for i, n := 0, 0; n < 15; n++ {
		_, at, err := ch.Wait(ctx, 5*time.Second, i, "write", func(e redistest.Event) bool { return e.Fields["result"] == "ok" })
		if err != nil {
			return r, err
		}
		i = at + 1
	}

	c := d.client()
	store, err := fence.New(goredisadapter.New(c))
	if err != nil {
		return r, err
	}
	type write struct {
		value string
		err   error
		sent  time.Time
		epoch int64
	}
	wrote := make(chan write, 1)
	ncfg := d.electionConfig(name, "parent")
	ncfg.Fence = store
	p, err := startNode(ctx, d, ncfg, func(ctx context.Context, term election.Term) error {
		w := write{value: fmt.Sprintf("new leader, epoch %d", term.Epoch), sent: time.Now(), epoch: term.Epoch}
		w.err = term.Fencer.Set(ctx, cfg.Key, w.value)
		wrote <- w
		<-ctx.Done()
		return nil
	})
	if err != nil {
		return r, err
	}
	defer p.stop()
	if _, err := recv(ctx, p.follower, 5*time.Second, "parent following"); err != nil {
		return r, err
	}

	frozen := time.Now()
	if err := ch.Freeze(); err != nil {
		return r, err
	}
	// When the frozen leader's lease ends on the server, as the server says.
	expiry := time.Time{}
	if li, err := p.e.Leader(ctx); err == nil && li.Epoch == r.old {
		expiry = time.Now().Add(li.TTL)
	}
	won, err := recv(ctx, p.elected, electLease+5*time.Second, "parent elected while the old leader is frozen")
	if err != nil {
		return r, err
	}
	r.next = won.v
	w, err := recv(ctx, wrote, 5*time.Second, "the new leader's write")
	if err != nil {
		return r, err
	}
	if w.err != nil {
		return r, fmt.Errorf("the new leader's fenced write: %w", w.err)
	}
	r.nextValue = w.value
	if err := sleepUntil(ctx, frozen.Add(electFreeze)); err != nil { // the freeze is the point; nothing to wait for
		return r, err
	}
	thawed := time.Now()
	if err := ch.Thaw(); err != nil {
		return r, err
	}
	// The first waking after the thaw: a write slowed by a loaded machine can
	// report a gap too, while the term is still valid.
	woke, _, err := ch.Wait(ctx, 5*time.Second, 0, "woke", func(e redistest.Event) bool { return !e.At.Before(thawed) })
	if err != nil {
		return r, err
	}
	stale, _, err := ch.Wait(ctx, 5*time.Second, 0, "write", func(e redistest.Event) bool { return !e.Time("sent").Before(thawed) })
	if err != nil {
		return r, err
	}
	demoted, _, err := ch.Wait(ctx, 5*time.Second, 0, "demoted", nil)
	if err != nil {
		return r, err
	}
	if r.final, err = store.Get(ctx, cfg.Key); err != nil {
		return r, err
	}
	r.stillLeading = p.e.IsLeader()
	end := time.Now()

	r.window = demoted.At.Sub(won.at)
	r.failover = won.at.Sub(frozen)
	r.afterThaw = demoted.At.Sub(thawed)
	r.reason, r.wokeLeader = demoted.Fields["reason"], woke.Fields["is_leader"]
	r.staleResult = stale.Fields["result"]
	var highest int64
	if _, err := fmt.Sscanf(r.staleResult, "stale:%d", &highest); err == nil {
		r.refusedBy = highest
	}
	if expiry.IsZero() {
		expiry = won.at // the follower wins within milliseconds of the expiry
	}

	clk := clock{el.At}
	tl := &Timeline{
		ID:    "split-brain",
		Title: "Split brain: the old leader's process frozen (SIGSTOP) past its lease",
		Caption: fmt.Sprintf("Lease %s, freeze %s. The old leader (epoch %d) writes every 10 ms; frozen, its lease expires and the new leader (epoch %d) is elected and writes. On waking the old leader writes before it notices, is refused, and steps down.",
			fmtMs(electLease), fmtMs(electFreeze), r.old, r.next),
		EndMs: clk.at(end),
	}
	lo := tl.lane(fmt.Sprintf("old leader, pid %d", ch.Pid()), fmt.Sprintf("epoch %d", r.old))
	lo.span(spanLease, 0, clk.at(expiry), "lease")
	lo.span(spanBelieves, 0, clk.at(demoted.At), "believes it leads")
	lo.span(spanFrozen, clk.at(frozen), clk.at(thawed), "frozen (SIGSTOP)")
	lo.mark(markEvent, 0, "elected")
	for _, e := range ch.Events() {
		if e.Kind == "write" && e.Fields["result"] == "ok" && e.Time("sent").Before(frozen) {
			lo.mark(markAccepted, clk.at(e.Time("sent")), "")
		}
	}
	if r.refusedBy > 0 {
		lo.mark(markRefused, clk.at(stale.Time("sent")), "write refused")
	} else {
		lo.mark(markClobbered, clk.at(stale.Time("sent")), "write "+r.staleResult)
	}
	lo.mark(markEvent, clk.at(demoted.At), "steps down")
	ln := tl.lane("new leader, this process", fmt.Sprintf("epoch %d", r.next))
	ln.span(spanLease, clk.at(won.at), clk.at(end), "lease")
	ln.span(spanBelieves, clk.at(won.at), clk.at(end), "leads")
	ln.mark(markEvent, clk.at(won.at), "elected")
	ln.mark(markAccepted, clk.at(w.sent), "write accepted")
	tl.Windows = append(tl.Windows, Window{FromMs: clk.at(won.at), ToMs: clk.at(demoted.At), Label: "split brain: both believe they lead"})
	r.timeline = tl
	return r, p.stop()
}
