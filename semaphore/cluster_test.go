package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
)

// On a Cluster of three primaries every script of a semaphore touches one
// slot (its keys share the hash tag {name}), so nothing is refused with
// CROSSSLOT, and names spread over all three primaries work the same:
// capacity held, a waiter woken by a release, Holders, Extend.
func TestEveryOperationRunsOnAClusterOfThreePrimaries(t *testing.T) {
	cl := redistest.StartCluster(t)
	c := cl.PrimitiveClient(t)
	i, err := semaphore.New(c, semaphore.WithPrefix("semaphore:"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	primaries := map[string]bool{}
	for n := 0; len(primaries) < 3 && n < 64; n++ {
		name := fmt.Sprintf("tenant-%d", n)
		primaries[cl.PrimaryOf(t, "semaphore:{"+name+"}").Addr()] = true
		a, err := i.Acquire(ctx, name, 2, 10*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := i.Acquire(ctx, name, 2, 10*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := i.Acquire(ctx, name, 2, time.Second); !errors.Is(err, semaphore.ErrFull) {
			t.Fatalf("%s: third acquire on capacity 2: %v, want ErrFull", name, err)
		}
		if err := i.Extend(ctx, a, 10*time.Second); err != nil {
			t.Fatalf("%s: extend: %v", name, err)
		}
		if h, err := i.Holders(ctx, name); err != nil || len(h) != 2 {
			t.Fatalf("%s: holders %v, %v; want 2", name, h, err)
		}
		woke := make(chan error, 1)
		go func() {
			p, err := i.AcquireWait(ctx, name, 2, time.Second)
			if err == nil && p.Token <= b.Token {
				err = fmt.Errorf("waiter's token %d, not above %d", p.Token, b.Token)
			}
			woke <- err
		}()
		waitFor(t, 5*time.Second, name+": the waiter subscribed and marked the semaphore", func() bool {
			return c.Exists(ctx, "semaphore:{"+name+"}:waiting").Val() == 1
		})
		if ok, err := i.Release(ctx, a); err != nil || !ok {
			t.Fatalf("%s: release: %v, %v", name, ok, err)
		}
		if err := <-woke; err != nil {
			t.Fatalf("%s: waiter: %v", name, err)
		}
	}
	t.Logf("semaphores on %d primaries", len(primaries))
	if len(primaries) != 3 {
		t.Fatalf("names reached %d primaries, want 3", len(primaries))
	}
}
