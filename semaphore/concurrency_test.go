package semaphore_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
)

// serverTrace collects, from an Issuer's hook, the server's clock at each
// grant and release of a permit: the intervals during which the server
// counted it live.
type serverTrace struct {
	mu       sync.Mutex
	granted  map[string]time.Time
	released map[string]time.Time
	tokens   map[string]int64
}

func newServerTrace() *serverTrace {
	return &serverTrace{granted: map[string]time.Time{}, released: map[string]time.Time{}, tokens: map[string]int64{}}
}

func (tr *serverTrace) hook(_ context.Context, e semaphore.Event) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	switch {
	case e.Op == "acquire" && e.Outcome == "acquired":
		tr.granted[e.PermitID], tr.tokens[e.PermitID] = e.ServerTime, e.Token
	case e.Op == "release" && e.Outcome == "released":
		tr.released[e.PermitID] = e.ServerTime
	}
}

// mostAtOnce sweeps the intervals in the server's order and returns the
// largest number live at one instant. A grant and a release at the same
// microsecond count as overlapping, which can only overstate the figure.
func (tr *serverTrace) mostAtOnce(t *testing.T) int {
	t.Helper()
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for id, g := range tr.granted {
		r, ok := tr.released[id]
		if !ok {
			t.Fatalf("permit %s granted at %v was never released", id, g)
		}
		edges = append(edges, edge{g, +1}, edge{r, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return b.delta - a.delta // grants first
	})
	live, most := 0, 0
	for _, e := range edges {
		live += e.delta
		most = max(most, live)
	}
	return most
}

// 500 goroutines contend for a semaphore of capacity 5, each waiting for a
// permit, holding it briefly and releasing it. Intervals from the server's
// clock (each script's TIME) never overlap more than 5 deep, every token is
// distinct and in the server's order, and every permit comes back.
func TestFiveHundredGoroutinesOnCapacityFiveNeverHaveMoreThanFiveHolders(t *testing.T) {
	s := redistest.Start(t)
	tr := newServerTrace()
	i := newIssuer(t, s, semaphore.WithHook(tr.hook))
	const goroutines, capacity = 500, 5
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			p, err := i.AcquireWait(ctx, "pool", capacity, 30*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Millisecond) // the work
			if ok, err := i.Release(ctx, p); err != nil || !ok {
				t.Errorf("release of token %d: %v, %v", p.Token, ok, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	took := time.Since(start)
	tr.mu.Lock() // the hook takes it too: no Issuer call below until it is unlocked
	if len(tr.granted) != goroutines || len(tr.released) != goroutines {
		t.Fatalf("%d granted, %d released, want %d each", len(tr.granted), len(tr.released), goroutines)
	}
	most := tr.mostAtOnce(t)
	// Tokens in the order the server granted them strictly increase.
	ids := make([]string, 0, goroutines)
	for id := range tr.granted {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return tr.granted[a].Compare(tr.granted[b]) })
	for n := 1; n < len(ids); n++ {
		if tr.tokens[ids[n]] <= tr.tokens[ids[n-1]] {
			t.Fatalf("token %d granted after %d", tr.tokens[ids[n]], tr.tokens[ids[n-1]])
		}
	}
	tr.mu.Unlock()
	t.Logf("%d goroutines, capacity %d: all served in %v; at most %d permits live at one server instant", goroutines, capacity, took, most)
	if most != capacity {
		t.Fatalf("at most %d live at once, want exactly %d: more is the bug, fewer means the test did not contend", most, capacity)
	}
	// Every permit is back: capacity fresh ones are granted at once.
	if h := holders(t, i, "pool"); len(h) != 0 {
		t.Fatalf("%d permits still live after every release", len(h))
	}
	for range capacity {
		mustAcquire(t, i, "pool", capacity, time.Second)
	}
}
