package fence_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// newStore returns a Store on a fresh server, its client, and a key prefix
// for the test. Keys built as prefix+"{name}" keep their marks under the
// prefix too, so a shared REDIS_ADDR is cleaned up.
func newStore(t *testing.T, opts ...fence.Option) (*fence.Store, *redis.Client, string) {
	t.Helper()
	s := redistest.Start(t)
	c := s.Client(t)
	store, err := fence.New(goredisadapter.New(c), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return store, c, s.Prefix()
}

func mustGet(t *testing.T, store *fence.Store, key string) string {
	t.Helper()
	v, err := store.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return v
}

func mustHighest(t *testing.T, store *fence.Store, key string) int64 {
	t.Helper()
	n, err := store.Highest(context.Background(), key)
	if err != nil {
		t.Fatalf("highest %q: %v", key, err)
	}
	return n
}

// wantStale fails t unless err is a *StaleError for token with highest.
func wantStale(t *testing.T, err error, token, highest int64) {
	t.Helper()
	var se *fence.StaleError
	if !errors.Is(err, fence.ErrStale) || !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *StaleError matching ErrStale", err)
	}
	if se.Token != token || se.Highest != highest {
		t.Fatalf("StaleError{Token: %d, Highest: %d}, want {%d, %d}", se.Token, se.Highest, token, highest)
	}
}

func TestCurrentHolderRepeatedWritesAreAllAccepted(t *testing.T) {
	store, _, p := newStore(t)
	ctx := context.Background()
	key, hash := p+"{acct}", p+"{acct}:h"
	f := store.Fencer(7)
	for i := range 20 {
		v := string(rune('a' + i))
		if err := f.Set(ctx, key, v); err != nil {
			t.Fatalf("write %d with the current token: %v", i, err)
		}
		if got := mustGet(t, store, key); got != v {
			t.Fatalf("after write %d: %q, want %q", i, got, v)
		}
		if err := f.HSet(ctx, hash, "n", i); err != nil {
			t.Fatalf("hset %d with the current token: %v", i, err)
		}
	}
	if n, err := store.HGet(ctx, hash, "n"); err != nil || n != "19" {
		t.Fatalf("hget: %q, %v; want 19", n, err)
	}
	if h := mustHighest(t, store, key); h != 7 {
		t.Fatalf("highest = %d, want 7", h)
	}
}

func TestLowerTokenIsRefusedAndWritesNothing(t *testing.T) {
	store, _, p := newStore(t)
	ctx := context.Background()
	key := p + "{acct}"
	if err := store.Set(ctx, 5, key, "new"); err != nil {
		t.Fatal(err)
	}
	wantStale(t, store.Set(ctx, 4, key, "old"), 4, 5)
	if got := mustGet(t, store, key); got != "new" {
		t.Fatalf("value = %q after a refused write, want %q", got, "new")
	}
	// A higher token moves the mark on.
	if err := store.Set(ctx, 9, key, "newer"); err != nil {
		t.Fatal(err)
	}
	wantStale(t, store.Set(ctx, 5, key, "new again"), 5, 9)
	if h := mustHighest(t, store, key); h != 9 {
		t.Fatalf("highest = %d, want 9", h)
	}
}

func TestStaleWriterThatGetsThereFirstIsAcceptedThenFencedOutForGood(t *testing.T) {
	store, _, p := newStore(t)
	ctx := context.Background()
	key := p + "{acct}"
	stale, fresh := store.Fencer(1), store.Fencer(2)

	// The documented limit: the resource has seen no higher token yet, so
	// it cannot know token 1 is stale. The write is accepted.
	if err := stale.Set(ctx, key, "from stale"); err != nil {
		t.Fatalf("a stale writer arriving first was refused (%v): the resource cannot know it is stale, fencing only orders writes", err)
	}
	if got := mustGet(t, store, key); got != "from stale" {
		t.Fatalf("value = %q", got)
	}
	if err := fresh.Set(ctx, key, "from fresh"); err != nil {
		t.Fatal(err)
	}
	// From the newer holder's first write on, every stale write is refused,
	// whichever kind of write it is.
	for range 5 {
		wantStale(t, stale.Set(ctx, key, "stale again"), 1, 2)
		_, err := stale.Eval(ctx, "redis.call('SET', KEYS[2], 'stale eval')", []string{key})
		wantStale(t, err, 1, 2)
	}
	if got := mustGet(t, store, key); got != "from fresh" {
		t.Fatalf("value = %q, want the fresh holder's", got)
	}
}
