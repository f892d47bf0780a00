package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
)

// Both replicas are frozen and cut off, so they miss every permit the
// primary grants next; the primary is then killed and Sentinel promotes
// one of them. The promoted replica has no record of those permits (it
// grants the full capacity again) nor of their tokens, and still every
// token it grants is above every token granted before: they follow the
// server's clock.
func TestTokensNeverGoBackAcrossASentinelFailoverToALaggingReplica(t *testing.T) {
	sen := redistest.StartSentinel(t)
	ctx := context.Background()
	primary := sen.Primary(t)
	var replicas []*redistest.Server
	for _, s := range sen.Servers() {
		if s != primary {
			replicas = append(replicas, s)
		}
	}
	pc := primary.Client(t)
	for _, r := range replicas {
		r.Freeze(t)
	}
	if err := pc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*redistest.SentinelDownAfter, "no replica online on the primary", func() bool {
		info, err := pc.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "connected_slaves:0")
	})

	const capacity = 3
	i := newIssuerOn(t, primary, sen.Client(t))
	var before []*semaphore.Permit
	for range capacity {
		before = append(before, mustAcquire(t, i, "pool", capacity, time.Minute))
	}
	highest := before[capacity-1].Token

	fo := sen.KillPrimaryThawing(t, replicas...)
	var after []*semaphore.Permit
	waitFor(t, 10*redistest.SentinelDownAfter, "the failover client reaches the new primary", func() bool {
		p, err := i.Acquire(ctx, "pool", capacity, time.Minute)
		if err == nil {
			after = append(after, p)
		} else if errors.Is(err, semaphore.ErrFull) {
			t.Fatalf("the promoted replica has the old permits: %v; it was meant to miss them", err)
		}
		return len(after) == capacity
	})
	t.Logf("Sentinel promoted %s in %v: highest token before %d, first after %d (+%d µs); %d permits granted again while the %d old ones live on",
		fo.New.Addr(), fo.Took.Round(time.Millisecond), highest, after[0].Token, after[0].Token-highest, len(after), len(before))
	for n, p := range after {
		if p.Token <= highest {
			t.Fatalf("token %d after the failover (%d of %d), not above %d", p.Token, n+1, capacity, highest)
		}
	}
	if _, err := i.Acquire(ctx, "pool", capacity, time.Minute); !errors.Is(err, semaphore.ErrFull) {
		t.Fatal(fmt.Errorf("acquire past the capacity after the failover: %w", err))
	}
}
