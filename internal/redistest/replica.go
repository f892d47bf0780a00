package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartReplica starts a second server that replicates s (REPLICAOF) and
// returns once the replication link is up. It is stopped when t ends.
func (s *Server) StartReplica(t testing.TB) *Server {
	t.Helper()
	bin := s.process(t, "StartReplica").cmd.Path
	l, err := newRelay(s.addr)
	if err != nil {
		t.Fatalf("redistest: replication link: %v", err)
	}
	t.Cleanup(l.Close) // runs after the replica stops: cleanups run last-in first-out
	r := startProcess(t, bin, s.prefix, []string{"--replicaof", "127.0.0.1", strconv.Itoa(l.port())})
	r.link = l
	if err := waitLinkUp(r.addr, 10*time.Second); err != nil {
		t.Fatalf("redistest: replica %s of %s: %v", r.addr, s.addr, err)
	}
	// The replica reports its link up before the primary counts it as
	// online; until then WAIT does not ask it for an acknowledgement.
	if err := waitOnline(s.addr, r.port, 10*time.Second); err != nil {
		t.Fatalf("redistest: replica %s of %s: %v", r.addr, s.addr, err)
	}
	return r
}

// Partition cuts the replica off from its primary: nothing the primary
// sends arrives until Heal, so writes acknowledged meanwhile exist only on
// the primary. It fails t on a server that is not a replica.
func (s *Server) Partition(t testing.TB) {
	t.Helper()
	s.replicaLink(t).Stall()
}

// Heal reconnects a partitioned replica; what was held is delivered.
func (s *Server) Heal(t testing.TB) {
	t.Helper()
	s.replicaLink(t).Resume()
}

func (s *Server) replicaLink(t testing.TB) *Relay {
	t.Helper()
	if s.link == nil {
		t.Fatal("redistest: Partition and Heal need a server made by StartReplica")
	}
	return s.link
}

// Promote turns a replica into a primary (REPLICAOF NO ONE), as a failover
// would: whatever the old primary had not yet sent it is lost.
func (s *Server) Promote(t testing.TB) {
	t.Helper()
	c := redis.NewClient(s.Options())
	defer c.Close()
	if err := c.Do(context.Background(), "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatalf("redistest: promote %s: %v", s.addr, err)
	}
}

func waitLinkUp(addr string, wait time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
	defer c.Close()
	deadline := time.Now().Add(wait)
	for {
		info, err := c.Info(context.Background(), "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("replication link not up within %v (last error: %v)", wait, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitOnline(primary string, replicaPort int, wait time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: primary, DisableIdentity: true})
	defer c.Close()
	want := "port=" + strconv.Itoa(replicaPort) + ",state=online"
	deadline := time.Now().Add(wait)
	for {
		info, err := c.Info(context.Background(), "replication").Result()
		if err == nil && strings.Contains(info, want) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("primary does not list the replica online within %v (last error: %v)", wait, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
