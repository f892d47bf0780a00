package fence_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/internal/redistest"
)

// With a mark per key, a stale holder can still write every key the newer
// holder has not written yet. A shared scope closes that: the newer
// holder's first write, to any key, fences the stale one out of all.
func TestPerKeyMarksLetStaleHolderWriteUntouchedKeysButScopeDoesNot(t *testing.T) {
	s := redistest.Start(t, redistest.Own()) // scope marks live outside any test prefix
	c := s.Client(t)
	ctx := context.Background()

	perKey, err := fence.New(c)
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

	scoped, err := fence.New(c, fence.WithScope("job2"))
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

// On Redis Cluster every script must touch one slot. A real Cluster (three
// primaries, a replica each) answers CROSSSLOT otherwise, so this runs each
// write on one.
func TestFencedWritesRunOnRedisClusterWithMarkInTheDataSlot(t *testing.T) {
	cc := redistest.StartCluster(t).PrimitiveClient(t)
	ctx := context.Background()

	// The node refuses a script whose keys span slots: the check is real.
	if err := cc.Eval(ctx, "return 1", []string{"{a}x", "{b}y"}).Err(); err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("cross-slot script: %v, want CROSSSLOT", err)
	}

	perKey, err := fence.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	scoped, err := fence.New(cc, fence.WithScope("orders"))
	if err != nil {
		t.Fatal(err)
	}
	// Untagged keys, tagged keys, a key with a lone '{': each one's mark
	// hashes like the key, or the node would answer CROSSSLOT.
	for _, k := range []string{"account:42", "{user:7}:profile", "app:{u:8}:cart"} {
		if err := perKey.Set(ctx, 2, k, "v2"); err != nil {
			t.Fatalf("set %q on a cluster: %v", k, err)
		}
		wantStale(t, perKey.Set(ctx, 1, k, "v1"), 1, 2)
		if _, err := perKey.Eval(ctx, 2, "redis.call('SET', KEYS[2], ARGV[2])", []string{k}, "v3"); err != nil {
			t.Fatalf("eval %q on a cluster: %v", k, err)
		}
		if got := mustGet(t, perKey, k); got != "v3" {
			t.Fatalf("%q = %q, want v3", k, got)
		}
		if h := mustHighest(t, perKey, k); h != 2 {
			t.Fatalf("highest %q = %d", k, h)
		}
	}
	if err := perKey.HSet(ctx, 1, "hash:9", "f", "v"); err != nil {
		t.Fatalf("hset on a cluster: %v", err)
	}
	// A brace with no tag: no mark under the key's name can share the
	// slot, refused up front.
	for _, k := range []string{"x{}", "a{b", "a}b"} {
		if err := perKey.Set(ctx, 1, k, "v"); !errors.Is(err, fence.ErrCrossSlot) {
			t.Fatalf("%s: %v, want ErrCrossSlot", k, err)
		}
	}

	// A scope: several keys, one mark, one slot.
	f := scoped.Fencer(5)
	if err := f.Set(ctx, f.Key("cursor"), "c"); err != nil {
		t.Fatal(err)
	}
	if err := f.HSet(ctx, f.Key("totals"), "eur", 10); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Eval(ctx, "redis.call('RPUSH', KEYS[2], ARGV[2]); redis.call('SET', KEYS[3], ARGV[2])",
		[]string{f.Key("log"), f.Key("last")}, "e1"); err != nil {
		t.Fatalf("multi-key eval in a scope on a cluster: %v", err)
	}
	_, err = scoped.Eval(ctx, 4, "redis.call('SET', KEYS[2], 'stale')", []string{scoped.Key("last")})
	wantStale(t, err, 4, 5)
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

// A mark is named after what it guards, so an ACL key pattern that covers
// the data covers its mark, and it sits in the data's slot: checked with
// CLUSTER KEYSLOT on a real Cluster, for untagged and tagged keys and
// both kinds of scope, with no doubled suffix.
func TestMarksShareTheDataPrefixAndSlotOnRedisCluster(t *testing.T) {
	cc := redistest.StartCluster(t).PrimitiveClient(t)
	ctx := context.Background()
	perKey, err := fence.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	bare, err := fence.New(cc, fence.WithScope("job"))
	if err != nil {
		t.Fatal(err)
	}
	prefixed, err := fence.New(cc, fence.WithScope("app:{job}"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		store     *fence.Store
		key, mark string
	}{
		{perKey, "app:x", "app:x:fence{app:x}"},
		{perKey, "{app:x}", "{app:x}:fence"},
		{perKey, "app:{u:7}:profile", "app:{u:7}:profile:fence"},
		{bare, bare.Key("cursor"), "{job}:fence"},
		{prefixed, prefixed.Key("cursor"), "app:{job}:fence"},
	}
	for _, tc := range cases {
		if err := tc.store.Set(ctx, 3, tc.key, "v"); err != nil {
			t.Fatalf("set %q: %v", tc.key, err)
		}
		if v, err := cc.Get(ctx, tc.mark).Result(); err != nil || v != "3" {
			t.Fatalf("mark of %q: GET %q = %q, %v; want the token 3", tc.key, tc.mark, v, err)
		}
		ks, err := cc.ClusterKeySlot(ctx, tc.key).Result()
		if err != nil {
			t.Fatal(err)
		}
		ms, err := cc.ClusterKeySlot(ctx, tc.mark).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ks != ms {
			t.Fatalf("%q is in slot %d, its mark %q in %d", tc.key, ks, tc.mark, ms)
		}
		if strings.Count(tc.mark, ":fence") != 1 {
			t.Fatalf("mark %q repeats its suffix", tc.mark)
		}
	}
	if got := prefixed.Key("cursor"); got != "app:{job}:cursor" {
		t.Fatalf("Key = %q, want app:{job}:cursor", got)
	}
	// Both marks of the prefixed scope's keys and the untagged key are
	// under "app:"; the tagged key "{app:x}" is not, and neither is its data.
	for _, m := range []string{"app:x:fence{app:x}", "app:{u:7}:profile:fence", "app:{job}:fence"} {
		if !strings.HasPrefix(m, "app:") {
			t.Fatalf("%q is outside app:*", m)
		}
	}
}
