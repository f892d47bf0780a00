package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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

func (c *Cluster) moveSlot(ctx context.Context, key string, pause time.Duration) (from, to *Server, err error) {
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
	src, dst := c.admin(from), c.admin(to)
	if err := dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", c.ids[from]).Err(); err != nil {
		return nil, nil, fmt.Errorf("SETSLOT IMPORTING: %w", err)
	}
	if err := src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", c.ids[to]).Err(); err != nil {
		return nil, nil, fmt.Errorf("SETSLOT MIGRATING: %w", err)
	}
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
