package redistest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
)

// A half-begun migration leaves the keys where they are and redirects a
// command on a key the owner lacks (ASK); abandoned, the slot is the
// owner's again. Moved back and forth in quick succession, the slot
// changes owner each time and its keys go with it: each move waits until
// the importing node has heard of every epoch, or the two nodes could end
// up redirecting to each other.
func TestSlotMigrationsRedirectAndMovesBackAndForthKeepTheKeys(t *testing.T) {
	cl := redistest.StartCluster(t)
	cc := cl.Client(t)
	ctx := context.Background()
	const key, missing = "{r}a", "{r}missing"
	if err := cc.Set(ctx, key, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	from, _, abandon := cl.BeginSlotMigration(t, key)
	owner := from.Client(t)
	if v, err := owner.Get(ctx, key).Result(); err != nil || v != "v" {
		t.Errorf("a key still on the owner while its slot migrates: %q, %v", v, err)
	}
	if err := owner.Get(ctx, missing).Err(); err == nil || !strings.HasPrefix(err.Error(), "ASK ") {
		t.Errorf("a key the owner lacks while its slot migrates: %v, want ASK", err)
	}
	abandon()
	if err := owner.Get(ctx, missing).Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("a key the owner lacks after the migration was abandoned: %v, want redis.Nil", err)
	}
	prev := from
	for i := range 6 {
		start := time.Now()
		f, to := cl.MoveSlot(t, key, 0)
		if f != prev || to == f {
			t.Fatalf("move %d: from %s to %s, want from %s", i, f.Addr(), to.Addr(), prev.Addr())
		}
		if v, err := cc.Get(ctx, key).Result(); err != nil || v != "v" {
			t.Fatalf("after move %d (%v): %q, %v", i, time.Since(start).Round(time.Millisecond), v, err)
		}
		prev = to
	}
}

// KeySlot is what the tests that look for names sharing a slot compute
// instead of asking CLUSTER KEYSLOT thousands of times (a search for eight
// names of one slot took ~115,000 round trips, 12-86 s of a test); it must
// be the server's answer, hash tags included.
func TestKeySlotIsTheServersSlot(t *testing.T) {
	cl := redistest.StartCluster(t)
	cc := cl.Client(t)
	ctx := context.Background()
	keys := []string{"", "a", "{", "}", "{}", "{}a", "a{}", "{a", "a}", "{a}", "x{a}y", "{a}{b}", "{{a}}", "{}{a}", "é{ü}"}
	for i := range 300 {
		keys = append(keys, fmt.Sprintf("k%d", i), fmt.Sprintf("p:{n%d}:c", i))
	}
	for _, k := range keys {
		want, err := cc.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := redistest.KeySlot(k); int64(got) != want {
			t.Errorf("KeySlot(%q) = %d, the server says %d", k, got, want)
		}
	}
}
