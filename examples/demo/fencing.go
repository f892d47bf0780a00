package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/lock"
)

// The scenario the project is built around: worker A's lease is 200 ms and
// its work takes 350 ms. Worker B tries from 220 ms, after A's lease expired
// on the server, acquires, and writes. Then A, still believing it holds the
// lock, writes.
const (
	staleLease = 200 * time.Millisecond
	staleBFrom = 220 * time.Millisecond
	staleAWork = 350 * time.Millisecond
)

type staleRun struct {
	a, b      *lock.Lease
	aErr      error  // what A's write returned
	final     string // the value after both writes
	aValue    string
	bValue    string
	timeline  *Timeline
	bAcquired time.Duration
}

// staleWrite plays the scenario twice with the real lock: once with plain
// SETs (the resource checks nothing) and once through a fence.Store.
func staleWrite(ctx context.Context, d *demo, row *Row, rep *Report) error {
	c := d.client()
	store, err := fence.New(goredisadapter.New(c))
	if err != nil {
		return err
	}
	unfenced, err := playStale(ctx, d, c, "unfenced", func(ctx context.Context, token int64, key, value string) error {
		return c.Set(ctx, key, value, 0).Err() // the token is carried and ignored
	})
	if err != nil {
		return fmt.Errorf("without fencing: %w", err)
	}
	fenced, err := playStale(ctx, d, c, "fenced", func(ctx context.Context, token int64, key, value string) error {
		return store.Set(ctx, token, key, value)
	})
	if err != nil {
		return fmt.Errorf("with fencing: %w", err)
	}
	rep.Timelines = append(rep.Timelines, unfenced.timeline, fenced.timeline)

	clobbered := unfenced.aErr == nil && unfenced.final == unfenced.aValue
	verdict := "kept B's write"
	if clobbered {
		verdict = "clobbered"
	}
	row.add("failure", fmt.Sprintf("stale write without fencing: %s (token %d wrote over token %d)", verdict, unfenced.a.Token, unfenced.b.Token),
		map[string]any{
			"clobbered": clobbered, "stale_token": unfenced.a.Token, "next_token": unfenced.b.Token,
			"final_value": unfenced.final, "lease_ms": ms(staleLease), "next_acquired_ms": ms(unfenced.bAcquired),
		})
	var stale *fence.StaleError
	refused := errors.As(fenced.aErr, &stale)
	text := "with fencing: accepted"
	figures := map[string]any{"refused": refused, "stale_token": fenced.a.Token, "next_token": fenced.b.Token,
		"final_value": fenced.final, "lease_ms": ms(staleLease), "next_acquired_ms": ms(fenced.bAcquired)}
	if refused {
		text = fmt.Sprintf("with fencing: refused (token %d < %d)", stale.Token, stale.Highest)
		figures["highest_accepted"] = stale.Highest
	} else if fenced.aErr != nil {
		text = "with fencing: error"
	}
	row.add("fix", text, figures)

	row.expect(clobbered, "without fencing the stale write did not overwrite B's value (final %q, A's write: %v)", unfenced.final, unfenced.aErr)
	row.expect(refused, "with fencing the stale write was not refused: %v", fenced.aErr)
	if refused {
		row.expect(stale.Token == fenced.a.Token && stale.Highest == fenced.b.Token,
			"refusal names tokens %d < %d, want A's %d < B's %d", stale.Token, stale.Highest, fenced.a.Token, fenced.b.Token)
	}
	row.expect(fenced.final == fenced.bValue, "with fencing the value is %q, want B's %q", fenced.final, fenced.bValue)
	for _, r := range []staleRun{unfenced, fenced} {
		row.expect(r.bAcquired >= staleLease, "B acquired at %v, before A's %v lease could expire", r.bAcquired, staleLease)
		row.expect(r.b.Token > r.a.Token, "B's token %d is not above A's %d", r.b.Token, r.a.Token)
	}
	return nil
}

// playStale runs the scenario once; write is the resource's write.
func playStale(ctx context.Context, d *demo, c *redis.Client, variant string,
	write func(ctx context.Context, token int64, key, value string) error) (staleRun, error) {
	locker, err := lock.New(goredisadapter.New(c), lock.WithPrefix(d.prefix+"lock:"))
	if err != nil {
		return staleRun{}, err
	}
	name := "account-42-" + variant + "-" + randomHex(3)
	key := d.prefix + "{" + name + "}:balance"
	var r staleRun

	t0 := time.Now()
	clk := clock{t0}
	if r.a, err = locker.Acquire(ctx, name, staleLease); err != nil {
		return r, fmt.Errorf("worker A: %w", err)
	}
	r.aValue = fmt.Sprintf("charged by A (token %d)", r.a.Token)

	type bDone struct {
		lease           *lock.Lease
		acquired, wrote time.Time
		err             error
	}
	bc := make(chan bDone, 1)
	go func() {
		var res bDone
		defer func() { bc <- res }()
		if res.err = sleepUntil(ctx, t0.Add(staleBFrom)); res.err != nil {
			return
		}
		// A's lease has expired on the server by now; on a loaded machine
		// the acquire may still race the expiry, so try until it succeeds.
		deadline := time.Now().Add(2 * time.Second)
		for {
			res.lease, res.err = locker.Acquire(ctx, name, 10*time.Second)
			if res.err == nil {
				break
			}
			if !errors.Is(res.err, lock.ErrHeld) || time.Now().After(deadline) {
				return
			}
			if res.err = sleepUntil(ctx, time.Now().Add(2*time.Millisecond)); res.err != nil {
				return
			}
		}
		res.acquired = time.Now()
		res.err = write(ctx, res.lease.Token, key, fmt.Sprintf("charged by B (token %d)", res.lease.Token))
		res.wrote = time.Now()
	}()

	// A's work: the scenario itself, not a wait for something.
	if err := sleepUntil(ctx, t0.Add(staleAWork)); err != nil {
		<-bc
		return r, err
	}
	b := <-bc // on a slow machine, make sure B wrote first
	if b.err != nil {
		return r, fmt.Errorf("worker B: %w", b.err)
	}
	r.b, r.bAcquired = b.lease, b.acquired.Sub(t0)
	r.bValue = fmt.Sprintf("charged by B (token %d)", r.b.Token)
	aWrote := time.Now()
	r.aErr = write(ctx, r.a.Token, key, r.aValue)
	aDone := time.Now()
	if r.final, err = c.Get(ctx, key).Result(); err != nil {
		return r, err
	}
	if _, err := locker.Release(ctx, r.b); err != nil {
		return r, err
	}
	end := time.Now()

	tl := &Timeline{ID: "stale-write-" + variant, EndMs: clk.at(end)}
	aExpired := clk.at(r.a.RequestedAt.Add(r.a.TTL))
	if variant == "fenced" {
		tl.Title = "Stale write with fencing (fence.Store)"
		tl.Caption = fmt.Sprintf("A's %s lease expires while A works; B acquires with token %d and writes; A's write with token %d is refused.", fmtMs(staleLease), r.b.Token, r.a.Token)
	} else {
		tl.Title = "Stale write without fencing (plain SET)"
		tl.Caption = fmt.Sprintf("Same sequence; the resource ignores the token, so A (token %d) silently overwrites B's write (token %d).", r.a.Token, r.b.Token)
	}
	la := tl.lane("worker A", fmt.Sprintf("token %d", r.a.Token))
	la.span(spanLease, clk.at(r.a.RequestedAt), aExpired, "lease")
	la.span(spanBelieves, clk.at(r.a.RequestedAt), clk.at(aDone), "works, believes it holds the lock")
	lb := tl.lane("worker B", fmt.Sprintf("token %d", r.b.Token))
	lb.span(spanLease, clk.at(b.acquired), clk.at(end), "lease")
	lb.span(spanBelieves, clk.at(b.acquired), clk.at(end), "holds the lock")
	lb.mark(markEvent, clk.at(b.acquired), "acquired")
	lb.mark(markAccepted, clk.at(b.wrote), "write accepted")
	switch {
	case r.aErr == nil && variant == "fenced":
		la.mark(markClobbered, clk.at(aWrote), "write accepted")
	case r.aErr == nil:
		la.mark(markClobbered, clk.at(aWrote), "overwrote B")
	default:
		la.mark(markRefused, clk.at(aWrote), "write refused")
	}
	tl.Windows = append(tl.Windows, Window{FromMs: aExpired, ToMs: clk.at(aWrote), Label: "A acts on an expired lease"})
	r.timeline = tl
	return r, nil
}
