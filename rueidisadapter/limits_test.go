package rueidisadapter_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/rueidisadapter"
)

// What the package doc says the adapter does not do: on a frozen server,
// a call whose deadline passes breaks its connection; the next call dials
// again, bounded by the dial timeout; and a call with a short deadline
// that needs the same connection waits for that dial, past its own
// deadline. (go-redis dials each call's connection within that call's
// context.) This test holds while rueidis does that; when it no longer
// does, it fails, and the doc changes.
func TestACallWaitsPastItsDeadlineForAnotherCallsDialToAFrozenServer(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	const dial = 2 * time.Second
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr()}, DisableCache: true,
		Dialer: net.Dialer{Timeout: dial}, PipelineMultiplex: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	c, err := rueidisadapter.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	key := s.Prefix() + "k"
	if err := c.Set(context.Background(), key, "1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	s.Freeze(t)
	defer s.Thaw(t)
	short := func() time.Duration {
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel()
		start := time.Now()
		_ = c.Get(ctx, key).Err()
		return time.Since(start)
	}
	first := short()
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.Get(context.Background(), key).Err() }) // dials, bounded by the dial timeout
	time.Sleep(50 * time.Millisecond)
	second := short()
	t.Logf("on a frozen server, a call with a 150ms deadline took %v, and %v once another call was dialling (dial timeout %v)", first, second, dial)
	if second < dial/2 {
		t.Fatalf("the second call took %v: it no longer waits for the other's dial; update the package doc", second)
	}
	wg.Wait()
}
