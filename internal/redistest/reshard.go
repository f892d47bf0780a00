package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// MoveSlot moves key's slot, live, from the primary that serves it to
// another primary, as redis-cli --cluster reshard does: the target is told
// it is IMPORTING the slot and the source that it is MIGRATING it, the
// slot's keys are moved one at a time with MIGRATE (pause between two),
// and every primary is then told the slot's new owner. Meanwhile clients
// see what they see during a real resharding: ASK for a key already moved,
// and TRYAGAIN for a command on several keys of the slot that sit on both
// nodes for a moment. It returns the old and the new owner.
func (c *Cluster) MoveSlot(t testing.TB, key string, pause time.Duration) (from, to *Server) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	from, to, err := c.moveSlot(ctx, key, pause)
	if err != nil {
		t.Fatalf("redistest: moving the slot of %q: %v\n%s", key, err, c.views(ctx))
	}
	return from, to
}

// BeginSlotMigration leaves key's slot half moved, as MoveSlot has it
// before its first MIGRATE: another primary IMPORTING it and its owner
// MIGRATING it, every key still on the owner. Meanwhile a command on keys
// the owner has runs there, and one on a key it lacks is redirected with
// ASK. The returned func abandons the migration (both nodes back to
// STABLE, the keys where they were); it runs at cleanup too.
func (c *Cluster) BeginSlotMigration(t testing.TB, key string) (from, to *Server, abandon func()) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	from, to, err := c.beginMigration(ctx, key)
	if err != nil {
		t.Fatalf("redistest: migrating the slot of %q: %v\n%s", key, err, c.views(ctx))
	}
	var once sync.Once
	abandon = func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
			defer cancel()
			slot := int(redisKeySlot(key))
			for _, n := range []*Server{from, to} {
				if err := c.admin(n).Do(ctx, "CLUSTER", "SETSLOT", slot, "STABLE").Err(); err != nil {
					t.Errorf("redistest: SETSLOT %d STABLE on %s: %v", slot, n.addr, err)
				}
			}
		})
	}
	t.Cleanup(abandon)
	return from, to, abandon
}

// beginMigration marks key's slot IMPORTING on another primary and
// MIGRATING on its owner.
func (c *Cluster) beginMigration(ctx context.Context, key string) (from, to *Server, err error) {
	slot := int(redisKeySlot(key))
	if from, err = c.primaryOf(ctx, key); err != nil {
		return nil, nil, err
	}
	for _, n := range c.live() {
		if n == from {
			continue
		}
		info, err := c.admin(n).Info(ctx, "replication").Result()
		if err != nil {
			return nil, nil, err
		}
		if strings.Contains(info, "role:master") {
			to = n
			break
		}
	}
	if to == nil {
		return nil, nil, fmt.Errorf("no other primary to move slot %d to", slot)
	}
	if err := waitCond(ctx, func() error { return c.knowsEveryEpoch(ctx, to) }); err != nil {
		return nil, nil, err
	}
	src, dst := c.admin(from), c.admin(to)
	if err := dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", c.ids[from]).Err(); err != nil {
		return nil, nil, fmt.Errorf("SETSLOT IMPORTING: %w", err)
	}
	if err := src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", c.ids[to]).Err(); err != nil {
		return nil, nil, fmt.Errorf("SETSLOT MIGRATING: %w", err)
	}
	return from, to, nil
}

func (c *Cluster) moveSlot(ctx context.Context, key string, pause time.Duration) (from, to *Server, err error) {
	slot := int(redisKeySlot(key))
	if from, to, err = c.beginMigration(ctx, key); err != nil {
		return nil, nil, err
	}
	src := c.admin(from)
	port := strconv.Itoa(to.port)
	for {
		keys, err := src.ClusterGetKeysInSlot(ctx, slot, 1).Result()
		if err != nil {
			return nil, nil, fmt.Errorf("GETKEYSINSLOT: %w", err)
		}
		if len(keys) == 0 {
			break
		}
		// A key that expired or was deleted since is not an error: NOKEY.
		if err := src.Do(ctx, "MIGRATE", "127.0.0.1", port, "", 0, 5000, "KEYS", keys[0]).Err(); err != nil && err.Error() != "NOKEY" {
			return nil, nil, fmt.Errorf("MIGRATE %q: %w", keys[0], err)
		}
		if pause > 0 {
			time.Sleep(pause)
		}
	}
	// The new owner first, then the old one, then the others, as redis-cli
	// does: a node that learns it has lost the slot redirects at once.
	for _, n := range append([]*Server{to, from}, c.live()...) {
		info, err := c.admin(n).Info(ctx, "replication").Result()
		if err != nil {
			return nil, nil, err
		}
		if !strings.Contains(info, "role:master") {
			continue
		}
		if err := c.admin(n).Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", c.ids[to]).Err(); err != nil {
			return nil, nil, fmt.Errorf("SETSLOT NODE on %s: %w", n.addr, err)
		}
	}
	err = waitCond(ctx, func() error {
		owner, err := c.primaryOf(ctx, key)
		if err == nil && owner != to {
			err = fmt.Errorf("slot %d still served by %s", slot, owner.addr)
		}
		return err
	})
	return from, to, err
}

// knowsEveryEpoch reports an error until n has heard of every live node's
// configEpoch. The node that imports a slot takes it with an epoch bumped
// past the greatest it knows (CLUSTER SETSLOT NODE), so that its claim
// wins over any older one; a node that has not yet heard of the epoch the
// last move gave the slot's owner does not bump, and its claim loses to
// any node still holding that newer one: an UPDATE gives the slot back to
// the old owner, which was told it had lost it, and each of the two then
// redirects to the other (MOVED) until the move times out. A slot moved
// back and forth within milliseconds on busy cores can meet that; a real
// resharding starts once the cluster agrees (redis-cli --cluster check).
func (c *Cluster) knowsEveryEpoch(ctx context.Context, n *Server) error {
	known, err := c.epoch(ctx, n, "cluster_current_epoch")
	if err != nil {
		return err
	}
	for _, m := range c.live() {
		if m == n {
			continue
		}
		e, err := c.epoch(ctx, m, "cluster_my_epoch")
		if err != nil {
			return err
		}
		if e > known {
			return fmt.Errorf("%s has not yet heard of %s's epoch %d (it knows %d)", n.addr, m.addr, e, known)
		}
	}
	return nil
}

// epoch returns the field of n's CLUSTER INFO.
func (c *Cluster) epoch(ctx context.Context, n *Server, field string) (int64, error) {
	info, err := c.admin(n).ClusterInfo(ctx).Result()
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), field+":"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no %s in CLUSTER INFO", n.addr, field)
}
