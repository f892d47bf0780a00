package fence_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// With a mark per key, a stale holder can still write every key the newer
// holder has not written yet. A shared scope closes that: the newer
// holder's first write, to any key, fences the stale one out of all.
func TestPerKeyMarksLetStaleHolderWriteUntouchedKeysButScopeDoesNot(t *testing.T) {
	s := redistest.Start(t, redistest.Own()) // scope marks live outside any test prefix
	c := s.Client(t)
	ctx := context.Background()

	perKey, err := fence.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	// New holder (token 2) writes the cursor; stale holder (1) then writes
	// the state key, which the new holder has not touched.
	if err := perKey.Set(ctx, 2, "{job}:cursor", "new"); err != nil {
		t.Fatal(err)
	}
	if err := perKey.Set(ctx, 1, "{job}:state", "stale"); err != nil {
		t.Fatalf("per-key marks: %v; want the stale write accepted (each key only knows its own writes)", err)
	}

	scoped, err := fence.New(goredisadapter.New(c), fence.WithScope("job2"))
	if err != nil {
		t.Fatal(err)
	}
	if err := scoped.Set(ctx, 2, scoped.Key("cursor"), "new"); err != nil {
		t.Fatal(err)
	}
	wantStale(t, scoped.Set(ctx, 1, scoped.Key("state"), "stale"), 1, 2)
	wantStale(t, scoped.HSet(ctx, 1, scoped.Key("h"), "f", "stale"), 1, 2)
	if _, err := scoped.Get(ctx, scoped.Key("state")); !errors.Is(err, fence.ErrNotFound) {
		t.Fatalf("the refused write landed: %v", err)
	}
	for _, k := range []string{"cursor", "state", "h"} {
		if h := mustHighest(t, scoped, scoped.Key(k)); h != 2 {
			t.Fatalf("highest for %s = %d, want the scope's 2", k, h)
		}
	}
	if got, want := scoped.Key("cursor"), "{job2}:cursor"; got != want {
		t.Fatalf("Key = %q, want %q", got, want)
	}
	// The scope's mark is one key, named after the scope.
	if v, err := c.Get(ctx, "{job2}:fence").Result(); err != nil || v != "2" {
		t.Fatalf("scope mark = %q, %v", v, err)
	}
}

// The untagged key "k" and the tagged key "{k}" are different resources,
// usually guarded by different locks whose tokens do not compare. They hash
// to one slot, and their marks must still be apart: otherwise a write with
// token 100 to one would fence out token 5 on the other, forever.
func TestUntaggedAndTaggedKeysOfOneSlotKeepMarksOfTheirOwn(t *testing.T) {
	store, _, prefix := newStore(t)
	ctx := context.Background()
	tagged, untagged := "{"+prefix+"acct}", prefix+"acct"
	if err := store.Set(ctx, 100, tagged, "a"); err != nil {
		t.Fatal(err)
	}
	if err := store.Set(ctx, 5, untagged, "b"); err != nil {
		t.Fatalf("a first write to %q was refused because of a write to %q: %v", untagged, tagged, err)
	}
	if got := mustHighest(t, store, untagged); got != 5 {
		t.Fatalf("highest of %q = %d, want 5", untagged, got)
	}
	if got := mustHighest(t, store, tagged); got != 100 {
		t.Fatalf("highest of %q = %d, want 100", tagged, got)
	}
}
