package semaphore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
)

// Losing the counter (FLUSHALL, a restart without persistence, a failover
// to a replica that never received the last grants) does not send tokens
// back: the next token follows the server's clock, which has moved on.
func TestTokensNeverGoBackWhenTheCounterIsLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		// lose returns the server to acquire from after the loss; before it,
		// live permits were granted on primary.
		lose func(t *testing.T, primary *redistest.Server, replica *redistest.Server) *redistest.Server
	}{
		{"FLUSHALL", func(t *testing.T, primary, _ *redistest.Server) *redistest.Server {
			if err := primary.Client(t).FlushAll(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
			return primary
		}},
		{"restart without persistence", func(t *testing.T, primary, _ *redistest.Server) *redistest.Server {
			primary.Restart(t)
			return primary
		}},
		{"failover to a lagging replica", func(t *testing.T, primary, replica *redistest.Server) *redistest.Server {
			primary.Kill(t)
			replica.Promote(t)
			return replica
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			primary := redistest.Start(t, redistest.Own())
			replica := primary.StartReplica(t)
			ctx := context.Background()
			// The replica has the semaphore's first grants, then is cut off
			// while the primary grants more: it lags.
			i := newIssuer(t, primary)
			first := mustAcquire(t, i, "pool", 10, time.Minute)
			if n, err := primary.Client(t).Wait(ctx, 1, 2*time.Second).Result(); err != nil || n != 1 {
				t.Fatalf("WAIT before the partition: %d, %v", n, err)
			}
			replica.Partition(t)
			var last int64
			for range 5 {
				last = mustAcquire(t, i, "pool", 10, time.Minute).Token
			}
			after := tc.lose(t, primary, replica)
			if v, err := after.Client(t).Get(ctx, permitsKey(primary, "pool")+":token").Int64(); err == nil && v >= last {
				t.Fatalf("the counter survived (%d): the test proves nothing", v)
			}
			next := mustAcquire(t, newIssuer(t, after), "pool", 10, time.Minute)
			t.Logf("first token %d, last before the loss %d, first after it %d (+%d µs)", first.Token, last, next.Token, next.Token-last)
			if next.Token <= last {
				t.Fatalf("token %d after the loss, not above %d", next.Token, last)
			}
		})
	}
}
