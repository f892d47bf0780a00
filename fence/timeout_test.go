package fence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/internal/redistest"
)

// A fenced write sent to a frozen server times out, and the server runs it
// when it wakes: the caller got context.DeadlineExceeded, and the value and
// the high-water mark changed all the same. A timeout does not mean "not
// written"; a holder that must know reads the key (or the mark) again.
func TestFencedWriteThatTimedOutOnAFrozenServerStillLandsOnceItWakes(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c := s.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled = true })
	store, err := fence.New(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := s.Prefix() + "balance"
	// Load the script: a first EVALSHA that times out runs nothing (the
	// server answers NOSCRIPT when it wakes).
	if err := store.Set(ctx, 1, key, "100"); err != nil {
		t.Fatal(err)
	}
	const timeout = 50 * time.Millisecond
	s.Freeze(t)
	wctx, cancel := context.WithTimeout(ctx, timeout)
	err = store.Set(wctx, 2, key, "120")
	cancel()
	s.Thaw(t)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("write on a frozen server: %v; want a deadline", err)
	}
	var v string
	deadline := time.Now().Add(100 * timeout)
	for {
		if v, err = store.Get(ctx, key); err != nil {
			t.Fatal(err)
		}
		if v == "120" || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	highest, err := store.Highest(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if v != "120" || highest != 2 {
		t.Fatalf("after the thaw: value %q, mark %d; want 120 and 2: the timed-out write ran when the server woke", v, highest)
	}
	t.Logf("the write that timed out after %v landed once the server woke: value %q, mark %d", timeout, v, highest)
}
