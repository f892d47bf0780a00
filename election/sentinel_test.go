package election_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/internal/redistest"
)

// epochsFollowTheServerClock says that lock's default tokens, which
// election's epochs are, follow the server's clock: a promoted replica then
// never issues an epoch at or below one already issued.
const epochsFollowTheServerClock = true

// A leader elected through a Sentinel-managed Redis: for each fault — (a)
// SENTINEL FAILOVER, (b) the primary SIGKILLed, (c) the primary frozen past
// down-after-milliseconds then thawed and demoted — a leader leads again
// within the time the failover, one TTL and one retry allow, and the
// figures show how long the election went without a leader. With epochs
// that follow the server's clock, no term after the fault reuses an epoch.
func TestElectionThroughSentinelLeadsAgainAfterEachFailoverWithinOneTTL(t *testing.T) {
	sen := redistest.StartSentinel(t)
	const ttl, renew = time.Second, 250 * time.Millisecond
	rec := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var electors []*election.Elector
	for i := range 3 {
		e, err := election.New(sen.Client(t), election.Config{
			Name: "sentinel", NodeID: fmt.Sprintf("n%d", i), TTL: ttl, RenewInterval: renew,
			RetryInterval: renew, Observer: rec.observer(),
		})
		if err != nil {
			t.Fatal(err)
		}
		electors = append(electors, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := e.Run(ctx, func(ctx context.Context, term election.Term) error {
				<-ctx.Done()
				return nil
			})
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("Run: %v", err)
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()

	leaders := func() int {
		n := 0
		for _, e := range electors {
			if e.IsLeader() {
				n++
			}
		}
		return n
	}
	waitFor(t, 10*ttl, "a first leader", func() bool { return leaders() > 0 })

	// One observer per data server asks that server alone who leads.
	type observed struct {
		server *redistest.Server
		client *redis.Client
		e      *election.Elector
	}
	var servers []observed
	for _, s := range sen.Servers() {
		c := s.Client(t, func(o *redis.Options) {
			o.MaxRetries = -1
			o.DialTimeout, o.ReadTimeout = 100*time.Millisecond, 100*time.Millisecond
		})
		e, err := election.New(c, election.Config{Name: "sentinel", NodeID: "observer"})
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, observed{s, c, e})
	}
	// confirmed reports whether a primary other than old holds a lease
	// whose node believes it leads in that very epoch: leadership restored
	// where the clients now write.
	confirmed := func(old *redistest.Server) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		for _, o := range servers {
			if o.server == old {
				continue
			}
			if role, err := o.client.Do(ctx, "ROLE").Slice(); err != nil || role[0] != "master" {
				continue
			}
			info, err := o.e.Leader(ctx)
			if err != nil {
				continue
			}
			for _, e := range electors {
				if epoch, ok := e.Epoch(); ok && e.NodeID() == info.NodeID && epoch == info.Epoch {
					return true
				}
			}
		}
		return false
	}

	faults := []struct {
		name string
		do   func(testing.TB) redistest.Failover
	}{
		{"SENTINEL FAILOVER", sen.Failover},
		{"SIGKILL", sen.KillPrimary},
		{"SIGSTOP past down-after", sen.FreezePrimary},
	}
	for _, f := range faults {
		// Sample who leads every millisecond while the fault runs, to
		// measure the stretches without a leader and with two, and poll the
		// servers for the moment leadership is restored on a new primary.
		old := sen.Primary(t)
		stop := make(chan struct{})
		gap := make(chan [4]time.Duration)
		start := time.Now()
		go func() {
			var longest, total, overlap, restored time.Duration
			var since time.Time
			prev := time.Now()
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					gap <- [4]time.Duration{longest, total, overlap, restored}
					return
				case now := <-tick.C:
					switch n := leaders(); {
					case n > 0:
						since = time.Time{}
						if n > 1 {
							overlap += now.Sub(prev)
						}
					case since.IsZero():
						since = now
					default:
						total += now.Sub(prev)
						longest = max(longest, now.Sub(since))
					}
					prev = now
					if restored == 0 && confirmed(old) {
						restored = time.Since(start)
					}
				}
			}
		}()
		before := rec.all()
		fo := f.do(t)
		// Clients learn the new primary from Sentinel at once or at their
		// next dial (DialTimeout, down-after); the lease the old primary
		// passed on, if any, ends within one TTL; a follower retries every
		// RetryInterval; the electors' goroutines share two busy cores.
		bound := fo.Took + redistest.SentinelDownAfter + ttl + renew + time.Second
		waitFor(t, bound-time.Since(start), f.name+": a leader confirmed by the new primary", func() bool { return confirmed(old) })
		close(stop)
		g := <-gap
		elected := g[3]
		var highest, reused int64
		for _, e := range before {
			if e.kind == "elected" {
				highest = max(highest, e.epoch)
			}
		}
		var epochs []int64
		for _, e := range rec.all()[len(before):] {
			if e.kind == "elected" {
				epochs = append(epochs, e.epoch)
				if e.epoch <= highest {
					reused++
				}
			}
		}
		t.Logf("%s: Sentinel agreed on the new primary in %v; a leader confirmed by the new primary %v after the fault (bound %v); no leader for %v at most (%v in all), two nodes leading at once for %v in all; epochs elected after: %v (highest before %d, %d not above it)",
			f.name, fo.Took.Round(time.Millisecond), elected.Round(time.Millisecond), bound.Round(time.Millisecond),
			g[0].Round(time.Millisecond), g[1].Round(time.Millisecond), g[2].Round(time.Millisecond), epochs, highest, reused)
		if epochsFollowTheServerClock && reused > 0 {
			t.Errorf("%s: %d terms after the failover reused an epoch at or below %d", f.name, reused, highest)
		}
	}
}
