package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest/naivesemaphore"
	"github.com/redis-primitives/go/semaphore"
)

// crashedHolders: both holders of a semaphore of capacity 2 die without
// giving their places back. The INCR/DECR semaphore is still full long
// after; the leased one admits a waiter as the dead holders' 300 ms
// permits expire.
func crashedHolders(ctx context.Context, d *demo, row *Row, _ *Report) error {
	const capacity, ttl, watch = 2, 300 * time.Millisecond, 1500 * time.Millisecond
	c := d.client()
	name := "exports-" + randomHex(3)

	naive := naivesemaphore.New(c, d.prefix+"naive-semaphore:")
	for range capacity {
		if ok, err := naive.Acquire(ctx, name, capacity); err != nil || !ok {
			return fmt.Errorf("naive: holder: %v, %w", ok, err)
		}
	}
	// The holders die here: no DECR. A newcomer tries for a while.
	start, admitted := time.Now(), false
	for time.Since(start) < watch && !admitted {
		ok, err := naive.Acquire(ctx, name, capacity)
		if err != nil {
			return err
		}
		admitted = ok
		time.Sleep(ttl / 6)
	}
	text := "INCR/DECR admitted a newcomer after crashed holders"
	if !admitted {
		text = fmt.Sprintf("INCR/DECR still full %d ms after both holders crashed", time.Since(start).Milliseconds())
	}
	row.add("failure", text, map[string]any{"capacity": capacity, "watched_ms": ms(time.Since(start)), "newcomer_admitted": admitted})
	row.expect(!admitted, "the naive semaphore gave a crashed holder's place back")

	// The leased semaphore, same sequence.
	sem, err := semaphore.New(goredisadapter.New(c), semaphore.WithPrefix(d.prefix+"semaphore:"))
	if err != nil {
		return err
	}
	var last *semaphore.Permit
	for range capacity {
		if last, err = sem.Acquire(ctx, name, capacity, ttl); err != nil {
			return fmt.Errorf("holder: %w", err)
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, watch)
	defer cancel()
	p, err := sem.AcquireWait(waitCtx, name, capacity, time.Second)
	if errors.Is(err, context.DeadlineExceeded) {
		row.expect(false, "the leased semaphore still full %v after the crash", watch)
		return nil
	} else if err != nil {
		return err
	}
	after := time.Since(last.RequestedAt.Add(ttl))
	if _, err := sem.Release(ctx, p); err != nil {
		return err
	}
	row.add("fix", fmt.Sprintf("leased: a place back %s after the permits' expiry (ttl %d ms), token %d > %d", fmtMs(after), ttl.Milliseconds(), p.Token, last.Token),
		map[string]any{"after_expiry_ms": ms(after), "ttl_ms": ms(ttl), "token": p.Token, "last_crashed_token": last.Token})
	row.expect(after >= 0 && after < 100*time.Millisecond, "the waiter got a place %v after the expiry", after)
	row.expect(p.Token > last.Token, "token %d not above %d", p.Token, last.Token)
	return nil
}
