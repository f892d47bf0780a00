package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest/naivelock"
	"github.com/redis-primitives/go/lock"
)

// releaseAfterExpiry: the first worker's 50 ms lease expires while it
// works; a second worker acquires for 10 s; then the first worker, done,
// releases. A third worker tries to acquire. With SET NX PX and a bare DEL
// the release deletes the second worker's lock and the third walks in; with
// compare-and-delete the release deletes nothing and the third is refused.
func releaseAfterExpiry(ctx context.Context, d *demo, row *Row, _ *Report) error {
	const short, long = 50 * time.Millisecond, 10 * time.Second
	c := d.client()
	name := "account-42-" + randomHex(3)

	// The naive lock.
	n := naivelock.New(c, d.prefix+"naive-lock:")
	if ok, err := n.Acquire(ctx, name, short); err != nil || !ok {
		return fmt.Errorf("naive: first worker: %v, %w", ok, err)
	}
	if err := waitFor(ctx, 2*time.Second, "the naive lock to expire", func() (bool, error) {
		k, err := c.Exists(ctx, d.prefix+"naive-lock:"+name).Result()
		return k == 0, err
	}); err != nil {
		return err
	}
	if ok, err := n.Acquire(ctx, name, long); err != nil || !ok {
		return fmt.Errorf("naive: second worker: %v, %w", ok, err)
	}
	if err := n.Release(ctx, name); err != nil { // the first worker's clean-up
		return err
	}
	thirdIn, err := n.Acquire(ctx, name, long)
	if err != nil {
		return err
	}
	text := "bare DEL left the next holder's lock"
	if thirdIn {
		text = "bare DEL deleted the next holder's lock"
	}
	row.add("failure", text, map[string]any{"third_worker_acquired": thirdIn, "first_lease_ms": ms(short), "second_lease_ms": ms(long)})
	row.expect(thirdIn, "the naive lock held: the bare DEL was expected to let a third worker in")

	// The real lock, same sequence.
	l, err := lock.New(goredisadapter.New(c), lock.WithPrefix(d.prefix+"lock:"))
	if err != nil {
		return err
	}
	first, err := l.Acquire(ctx, name, short)
	if err != nil {
		return fmt.Errorf("first worker: %w", err)
	}
	if err := waitFor(ctx, 2*time.Second, "the first lease to expire", func() (bool, error) {
		h, err := l.Holder(ctx, name)
		return !h.Held, err
	}); err != nil {
		return err
	}
	second, err := l.Acquire(ctx, name, long)
	if err != nil {
		return fmt.Errorf("second worker: %w", err)
	}
	released, err := l.Release(ctx, first)
	if err != nil {
		return err
	}
	holder, err := l.Holder(ctx, name)
	if err != nil {
		return err
	}
	_, thirdErr := l.Acquire(ctx, name, long)
	var held *lock.HeldError
	refused := errors.As(thirdErr, &held)
	if _, err := l.Release(ctx, second); err != nil {
		return err
	}
	text = "compare-and-delete deleted nothing"
	if released {
		text = "compare-and-delete deleted the next holder's lock"
	}
	row.add("fix", text, map[string]any{
		"stale_release_deleted": released, "holder_token_after": holder.Token, "next_holder_token": second.Token,
		"third_worker_refused": refused,
	})
	row.expect(!released, "the stale release reported that it deleted a lock")
	row.expect(holder.Held && holder.Token == second.Token, "after the stale release the holder is %+v, want token %d", holder, second.Token)
	row.expect(refused, "a third worker was not refused: %v", thirdErr)
	return nil
}
