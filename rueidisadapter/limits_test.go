package rueidisadapter_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/luascripts"
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
	rc := newRueidis(t, rueidis.ClientOption{InitAddress: addrs(s), Dialer: dialer(dial), PipelineMultiplex: -1})
	c := rueidisadapter.New(rc)
	key := s.Prefix() + "k"
	get := luascripts.NewReadOnly("get", "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])")
	if r := get.Run(context.Background(), c, []string{key}); r.Err != nil {
		t.Fatal(r.Err)
	}
	s.Freeze(t)
	defer s.Thaw(t)
	short := func() time.Duration {
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel()
		start := time.Now()
		_ = get.Run(ctx, c, []string{key})
		return time.Since(start)
	}
	first := short()
	var wg sync.WaitGroup
	wg.Go(func() { _ = get.Run(context.Background(), c, []string{key}) }) // dials, bounded by the dial timeout
	time.Sleep(50 * time.Millisecond)
	second := short()
	t.Logf("on a frozen server, a call with a 150ms deadline took %v, and %v once another call was dialling (dial timeout %v)", first, second, dial)
	if second < dial/2 {
		t.Fatalf("the second call took %v: it no longer waits for the other's dial; update the package doc", second)
	}
	wg.Wait()
}

// What the package doc says about Subscribe: on one server (or a
// Sentinel's primary) rueidis dials its dedicated connection without the
// caller's context, so a subscription to a frozen server returns at the
// dial timeout, not at its deadline (and sends nothing). On a Cluster the
// dial is the context's.
func TestSubscribeWaitsPastItsDeadlineForItsDialToAFrozenServer(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	const dial = time.Second
	c := rueidisadapter.New(newRueidis(t, rueidis.ClientOption{InitAddress: addrs(s), Dialer: dialer(dial)}))
	s.Freeze(t)
	defer s.Thaw(t)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	wake, stop := c.Subscribe(ctx, s.Prefix()+"chan")
	took := time.Since(start)
	stop()
	t.Logf("on a frozen server, a subscription with a 150ms deadline returned after %v (dial timeout %v)", took, dial)
	select {
	case <-wake:
		t.Fatal("a subscription to a frozen server woke its waiter")
	default:
	}
	if took < dial/2 {
		t.Fatalf("the subscription returned after %v: rueidis now dials it within its context; update the package doc", took)
	}
}
