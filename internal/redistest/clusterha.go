package redistest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClusterNodeTimeout is cluster-node-timeout: how long a primary may stay
// silent before its replica is promoted. A failover after a killed primary
// takes about twice this.
const ClusterNodeTimeout = 1000 * time.Millisecond

// clusterWait bounds each wait for the cluster to agree.
const clusterWait = 20 * ClusterNodeTimeout

// Cluster is a Redis Cluster of three primaries with one replica each, on
// loopback, every node the fixture's own.
type Cluster struct {
	nodes  []*Server
	ids    map[*Server]string
	admins map[*Server]*redis.Client

	mu sync.Mutex // serializes faults
}

// StartCluster starts six cluster-enabled nodes, assigns the slots to three
// of them in equal ranges, joins them (CLUSTER MEET), makes each of the
// other three a replica of one primary (CLUSTER REPLICATE) and returns once
// every node reports cluster_state:ok and every replica is in sync. It is
// stopped when t ends.
//
// Under go test -short (make test-quick) it skips t instead, as
// StartSentinel does.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	skipLong(t, "a Cluster (six nodes)")
	c := &Cluster{ids: map[*Server]string{}, admins: map[*Server]*redis.Client{}}
	t.Cleanup(func() {
		for _, a := range c.admins {
			_ = a.Close()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	for range 6 {
		n := Start(t, Own(), Args("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(ClusterNodeTimeout.Milliseconds(), 10)))
		c.admins[n] = redis.NewClient(&redis.Options{Addr: n.addr, DisableIdentity: true, MaxRetries: -1,
			DialTimeout: time.Second, ReadTimeout: time.Second, PoolSize: 2})
		id, err := c.admin(n).Do(ctx, "CLUSTER", "MYID").Text()
		if err != nil {
			t.Fatalf("redistest: CLUSTER MYID: %v", err)
		}
		c.nodes = append(c.nodes, n)
		c.ids[n] = id
	}
	const slots = 16384
	for i, p := range c.nodes[:3] {
		lo, hi := i*slots/3, (i+1)*slots/3-1
		if err := c.admin(p).Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			t.Fatalf("redistest: CLUSTER ADDSLOTSRANGE %d %d: %v", lo, hi, err)
		}
	}
	for _, n := range c.nodes[1:] {
		if err := c.admin(n).ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(c.nodes[0].port)).Err(); err != nil {
			t.Fatalf("redistest: CLUSTER MEET: %v", err)
		}
	}
	// A node can only replicate a primary it already knows.
	for _, n := range c.nodes {
		err := waitCond(ctx, func() error {
			nodes, err := c.admin(n).ClusterNodes(ctx).Result()
			if err != nil {
				return err
			}
			if k := strings.Count(strings.TrimSpace(nodes), "\n") + 1; k != len(c.nodes) {
				return fmt.Errorf("%s knows %d nodes", n.addr, k)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("redistest: cluster handshake: %v", err)
		}
	}
	for i, r := range c.nodes[3:] {
		if err := c.admin(r).ClusterReplicate(ctx, c.ids[c.nodes[i]]).Err(); err != nil {
			t.Fatalf("redistest: CLUSTER REPLICATE: %v", err)
		}
	}
	if err := c.waitSettled(ctx); err != nil {
		t.Fatalf("redistest: cluster not ready: %v", err)
	}
	return c
}

// admin returns the fixture's own client of one node. It reconnects to a
// node restarted on its port.
func (c *Cluster) admin(n *Server) *redis.Client { return c.admins[n] }

func waitCond(ctx context.Context, cond func() error) error {
	for {
		err := cond()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", err, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Nodes returns the six nodes in start order (not by role).
func (c *Cluster) Nodes() []*Server { return slices.Clone(c.nodes) }

// Client returns a cluster client seeded with every node, closed when t
// ends. tune, if given, adjusts the options first.
func (c *Cluster) Client(t testing.TB, tune ...func(*redis.ClusterOptions)) *redis.ClusterClient {
	t.Helper()
	opt := &redis.ClusterOptions{ContextTimeoutEnabled: true, DisableIdentity: true,
		DialTimeout: ClusterNodeTimeout, ReadTimeout: ClusterNodeTimeout, WriteTimeout: ClusterNodeTimeout}
	for _, n := range c.nodes {
		opt.Addrs = append(opt.Addrs, n.addr)
	}
	for _, f := range tune {
		f(opt)
	}
	cc := redis.NewClusterClient(opt)
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// PrimaryOf returns the node that serves key's slot, as the live nodes
// agree.
func (c *Cluster) PrimaryOf(t testing.TB, key string) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	p, err := c.primaryOf(ctx, key)
	if err != nil {
		t.Fatalf("redistest: primary of %q: %v", key, err)
	}
	return p
}

func (c *Cluster) primaryOf(ctx context.Context, key string) (*Server, error) {
	slot := int(redisKeySlot(key))
	var owner *Server
	for _, n := range c.live() {
		// CLUSTER SHARDS of Redis 7.0 keeps listing a failed primary, and
		// for a while lists no healthy one, for its slots; CLUSTER SLOTS
		// names the promoted replica at once.
		//lint:ignore SA1019 CLUSTER SHARDS is unreliable after a failover in Redis 7.0
		slots, err := c.admin(n).ClusterSlots(ctx).Result()
		if err != nil {
			return nil, err
		}
		var addr string
		for _, r := range slots {
			if r.Start <= slot && slot <= r.End && len(r.Nodes) > 0 {
				addr = r.Nodes[0].Addr
			}
		}
		i := slices.IndexFunc(c.nodes, func(s *Server) bool { return s.addr == addr })
		if i < 0 {
			return nil, fmt.Errorf("%s names %q for slot %d", n.addr, addr, slot)
		}
		if owner != nil && owner != c.nodes[i] {
			return nil, fmt.Errorf("nodes disagree on slot %d: %s, %s", slot, owner.addr, addr)
		}
		owner = c.nodes[i]
	}
	return owner, nil
}

// live returns the nodes whose process runs.
func (c *Cluster) live() []*Server {
	var out []*Server
	for _, n := range c.nodes {
		n.mu.Lock()
		p := n.proc
		n.mu.Unlock()
		select {
		case <-p.Exited():
		default:
			out = append(out, n)
		}
	}
	return out
}

// FailoverReplica runs CLUSTER FAILOVER on the replica of key's primary: a
// manual failover, in which the primary stops accepting writes until the
// replica has caught up, so nothing acknowledged is lost. It returns once
// every node names the replica as the slot's primary.
func (c *Cluster) FailoverReplica(t testing.TB, key string) Failover {
	t.Helper()
	return c.fault(t, key, "CLUSTER FAILOVER", func(ctx context.Context, old, replica *Server) error {
		return c.admin(replica).Do(ctx, "CLUSTER", "FAILOVER").Err()
	}, nil)
}

// KillPrimary ends key's primary with SIGKILL, waits until the cluster has
// promoted its replica (about ClusterNodeTimeout to notice, plus an
// election), then restarts the killed node empty on its port; it rejoins as
// the new primary's replica, from its nodes.conf.
func (c *Cluster) KillPrimary(t testing.TB, key string) Failover {
	t.Helper()
	return c.fault(t, key, "SIGKILL", func(ctx context.Context, old, replica *Server) error {
		return old.process(t, "KillPrimary").Kill()
	}, func(old *Server) error {
		return old.relaunch(old.process(t, "KillPrimary").cmd.Path)
	})
}

func (c *Cluster) fault(t testing.TB, key, what string, do func(ctx context.Context, old, replica *Server) error, after func(old *Server) error) Failover {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	old, err := c.primaryOf(ctx, key)
	if err != nil {
		t.Fatalf("redistest: before %s: %v", what, err)
	}
	replica, err := c.replicaOf(ctx, old)
	if err != nil {
		t.Fatalf("redistest: before %s: %v", what, err)
	}
	start := time.Now()
	if err := do(ctx, old, replica); err != nil {
		t.Fatalf("redistest: %s: %v", what, err)
	}
	err = waitCond(ctx, func() error {
		p, err := c.primaryOf(ctx, key)
		if err != nil {
			return err
		}
		if p != replica {
			return fmt.Errorf("slot still served by %s", p.addr)
		}
		return c.allOK(ctx)
	})
	if err != nil {
		t.Fatalf("redistest: after %s of %s: %v\n%s", what, old.addr, err, c.views(ctx))
	}
	took := time.Since(start)
	if after != nil {
		if err := after(old); err != nil {
			t.Fatalf("redistest: after %s: %v", what, err)
		}
	}
	if err := c.waitSettled(ctx); err != nil {
		t.Fatalf("redistest: after %s: %v", what, err)
	}
	return Failover{Old: old, New: replica, Took: took}
}

// replicaOf returns the node that replicates primary, by the replica's own
// view (the primary may not have heard of a recent change yet).
func (c *Cluster) replicaOf(ctx context.Context, primary *Server) (*Server, error) {
	for _, n := range c.live() {
		nodes, err := c.admin(n).ClusterNodes(ctx).Result()
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
			f := strings.Fields(line)
			if len(f) > 3 && strings.Contains(f[2], "myself") && strings.Contains(f[2], "slave") && f[3] == c.ids[primary] {
				return n, nil
			}
		}
	}
	return nil, fmt.Errorf("no node replicates %s", primary.addr)
}

func (c *Cluster) allOK(ctx context.Context) error {
	for _, n := range c.live() {
		a := c.admin(n)
		info, err := a.ClusterInfo(ctx).Result()
		if err != nil {
			return err
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Errorf("%s: cluster state not ok", n.addr)
		}
	}
	return nil
}

// waitSettled waits until every node is up and reports cluster_state:ok,
// three nodes are primaries and each of the others replicates one of them
// with its link up.
func (c *Cluster) waitSettled(ctx context.Context) error {
	return waitCond(ctx, func() error {
		if len(c.live()) != len(c.nodes) {
			return fmt.Errorf("%d of %d nodes run", len(c.live()), len(c.nodes))
		}
		if err := c.allOK(ctx); err != nil {
			return err
		}
		primaries, synced := 0, 0
		for _, n := range c.nodes {
			a := c.admin(n)
			info, err := a.Info(ctx, "replication").Result()
			if err != nil {
				return err
			}
			switch {
			case strings.Contains(info, "role:master"):
				primaries++
			case strings.Contains(info, "master_link_status:up") && !strings.Contains(info, "master_sync_in_progress:1"):
				synced++
			}
		}
		if primaries != 3 || synced != 3 {
			return fmt.Errorf("%d primaries, %d replicas in sync", primaries, synced)
		}
		// Every node's view must agree, config epochs included, before the
		// next fault. Once, a primary killed just after a CLUSTER FAILOVER
		// had made it primary was replaced by a replica that claimed the
		// slots with a config epoch below the dead primary's; the other
		// nodes kept the dead one as the slots' owner.
		var first string
		for _, n := range c.nodes {
			nodes, err := c.admin(n).ClusterNodes(ctx).Result()
			if err != nil {
				return err
			}
			v := clusterView(nodes)
			if first == "" {
				first = v
			} else if v != first {
				return fmt.Errorf("nodes' views differ:\n%s\n%s", first, v)
			}
		}
		return nil
	})
}

// clusterView is a node's CLUSTER NODES with what differs from node to
// node left out (myself, ping and pong times, link state): who is primary
// of what, with which config epoch.
func clusterView(nodes string) string {
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		flags := strings.ReplaceAll(f[2], "myself,", "")
		lines = append(lines, strings.Join(append([]string{f[0], flags, f[3], f[6]}, f[8:]...), " "))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// KeySlot is Redis Cluster's HASH_SLOT of key: CRC16 of its hash tag (or
// the whole key) modulo 16384, as CLUSTER KEYSLOT answers it, without a
// round trip. Tests that look for names sharing a slot try thousands.
func KeySlot(key string) int { return int(redisKeySlot(key)) }

// redisKeySlot is KeySlot.
func redisKeySlot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}

// views returns each live node's CLUSTER NODES, for a failure message.
func (c *Cluster) views(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	var b strings.Builder
	for _, n := range c.live() {
		nodes, err := c.admin(n).ClusterNodes(ctx).Result()
		fmt.Fprintf(&b, "CLUSTER NODES on %s (%v):\n%s\n", n.addr, err, nodes)
	}
	return b.String()
}
