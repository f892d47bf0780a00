package election_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// hookLog records Hook events.
type hookLog struct {
	mu     sync.Mutex
	events []election.Event
	noCtx  int
}

func (h *hookLog) hook(ctx context.Context, e election.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ctx == nil {
		h.noCtx++
	}
	h.events = append(h.events, e)
}

func (h *hookLog) of(op string) []election.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []election.Event
	for _, e := range h.events {
		if e.Op == op {
			out = append(out, e)
		}
	}
	return out
}

// The Hook sees every attempt and every
// renewal, with its latency, each with a context to trace it in. A leader
// holds a term over several renewals and resigns; a follower is told who
// leads, then wins the next term.
func TestHookSeesEveryAttemptAndRenewalWithItsLatency(t *testing.T) {
	s := redistest.Start(t)
	const ttl, renew = 600 * time.Millisecond, 50 * time.Millisecond
	var leader, follower hookLog
	cfgA := baseConfig(s, "hooked", "a", ttl, renew)
	cfgA.Hook = leader.hook
	cfgB := baseConfig(s, "hooked", "b", ttl, renew)
	cfgB.Hook = follower.hook
	a, err := election.New(goredisadapter.New(client(t, s)), cfgA)
	if err != nil {
		t.Fatal(err)
	}
	b, err := election.New(goredisadapter.New(client(t, s)), cfgB)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	elected := make(chan int64, 2)
	aDone, bDone := make(chan error, 1), make(chan error, 1)
	go func() {
		aDone <- a.Run(ctx, func(ctx context.Context, term election.Term) error {
			elected <- term.Epoch
			// Hold the term across several renewals, then resign.
			for len(leader.of("renew")) < 4 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(renew / 2):
				}
			}
			cancel() // a resigns for good; b takes over meanwhile
			return nil
		})
	}()
	first := <-elected
	bctx, bcancel := context.WithCancel(context.Background())
	defer bcancel()
	go func() {
		bDone <- b.Run(bctx, func(ctx context.Context, term election.Term) error {
			elected <- term.Epoch
			return nil
		})
	}()
	if err := <-aDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("a's Run: %v", err)
	}
	var second int64
	select {
	case second = <-elected:
	case <-time.After(5 * ttl):
		t.Fatal("b was not elected after a resigned")
	}
	bcancel()
	<-bDone

	renewals := leader.of("renew")
	for _, r := range renewals {
		if r.Outcome != "ok" || r.Epoch != first || r.Latency <= 0 {
			t.Fatalf("renewal %+v, want OK on epoch %d with its latency", r, first)
		}
	}
	won := leader.of("attempt")
	if len(won) == 0 || won[0].Outcome != "elected" || won[0].Epoch != first || won[0].Latency <= 0 {
		t.Fatalf("a's attempts %+v, want the first elected on epoch %d with its latency", won, first)
	}
	if e := leader.of("elected"); len(e) != 1 || e[0].Epoch != first {
		t.Fatalf("a's elected events %+v", e)
	}
	if d := leader.of("demoted"); len(d) != 1 || d[0].Epoch != first || d[0].Held <= 0 {
		t.Fatalf("a's demoted events %+v", d)
	}
	f := follower.of("follower")
	if len(f) != 1 || f[0].Leader.NodeID != "a" || f[0].Epoch != first {
		t.Fatalf("b's follower events %+v, want one naming a on epoch %d", f, first)
	}
	held := 0
	for _, at := range follower.of("attempt") {
		if at.Outcome == "held" {
			held++
			if at.Leader.NodeID != "a" {
				t.Fatalf("b's refused attempt names %+v", at.Leader)
			}
		}
	}
	if held == 0 || second <= first {
		t.Fatalf("b: %d refused attempts, elected on %d after %d", held, second, first)
	}
	if leader.noCtx+follower.noCtx > 0 {
		t.Fatalf("%d events without a context", leader.noCtx+follower.noCtx)
	}
	t.Logf("a: %d attempts, %d renewals (first %v); b: %d attempts, %d refused",
		len(won), len(renewals), renewals[0].Latency, len(follower.of("attempt")), held)
}

// A node that Redis refuses reports each failed attempt as an error with
// its cause: without it a wrong password looked like silence.
func TestHookSeesAnAttemptRefusedForAWrongPassword(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	if err := s.Client(t).Do(context.Background(), "ACL", "SETUSER", "elector", "on", ">right", "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	var h hookLog
	cfg := baseConfig(s, "denied", "a", time.Second, 200*time.Millisecond)
	cfg.Hook = h.hook
	e, err := election.New(goredisadapter.New(client(t, s, func(o *redis.Options) { o.Username, o.Password = "elector", "wrong" })), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(context.Background(), nil); err == nil {
		t.Fatal("Run with a wrong password returned nil")
	}
	at := h.of("attempt")
	if len(at) != 1 || at[0].Outcome != "error" || at[0].Err == nil {
		t.Fatalf("attempts %+v, want one error", at)
	}
}
