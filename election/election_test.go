package election_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
)

// Five nodes start at once. From the first election on, every sample over
// 1.5s finds exactly one of them leading, always the same one, with the
// first election's epoch, and only that node was ever elected: nobody was
// elected and displaced on the way. (Epochs are compared, never assumed: a
// counter starts at 1, a hybrid clock at the server's microseconds.)
func TestFiveElectorsHaveExactlyOneLeaderAtEverySampleWithTheFirstEpoch(t *testing.T) {
	s := redistest.Start(t)
	const ttl, renew = 600 * time.Millisecond, 150 * time.Millisecond
	var nodes []*node
	for i := range 5 {
		cfg := baseConfig(s, "five", fmt.Sprintf("node-%d", i), ttl, renew)
		nodes = append(nodes, startNode(t, client(t, s), cfg, nil))
	}
	waitFor(t, 5*time.Second, "a leader", func() bool { return len(leaders(nodes)) > 0 })

	first := leaders(nodes)
	if len(first) != 1 {
		t.Fatalf("leaders at first sample: %v", first)
	}
	leader := first[0]
	want, _ := nodes[leader].e.Epoch()
	samples := 0
	for start := time.Now(); time.Since(start) < 1500*time.Millisecond; samples++ {
		if got := leaders(nodes); len(got) != 1 || got[0] != leader {
			t.Fatalf("sample %d after %v: leaders %v, want exactly [%d]", samples, time.Since(start), got, leader)
		}
		epoch, ok := nodes[leader].e.Epoch()
		if !ok || epoch != want {
			t.Fatalf("sample %d: leader's epoch %d (ok %v), want %d, the first election's", samples, epoch, ok, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
	info, err := nodes[(leader+1)%5].e.Leader(context.Background())
	if err != nil || info.NodeID != nodes[leader].e.NodeID() || info.Epoch != want {
		t.Errorf("a follower's view of the leader: %+v, %v; want %s with epoch %d", info, err, nodes[leader].e.NodeID(), want)
	}
	for i, n := range nodes {
		if got := n.rec.count("elected"); (i == leader) != (got == 1) || got > 1 {
			t.Errorf("node %d elected %d times", i, got)
		}
	}
	t.Logf("%d samples over 1.5s, leader node-%d with epoch %d throughout", samples, leader, want)
}
