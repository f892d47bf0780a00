package clienttest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// A Batcher (each primitive's WithBatching) sends the calls of many
// goroutines in shared round trips through Eval. A client that mixed up a
// batch's replies would give one caller another's decision; one that
// reordered a batch's calls on a key would run a caller's second call
// before its first. 50 goroutines on 5 keys: each call appends its own
// name to its key's list and answers where it landed, so that the list
// tells, for every call, whether the reply it got is its own, and whether
// each goroutine's calls ran in the order it made them. (The order of
// calls that different goroutines make at the same moment is not
// observable from outside; the order within a batch is Eval's, which
// TestConformanceAClusterBatchGivesEachCallItsOwnReplyInOrderPerServer
// checks.)
func TestConformanceTheBatcherGivesEachCallItsOwnReplyAndAKeysCallsTheirOrder(t *testing.T) {
	appendTo := luascripts.New("append", "return redis.call('RPUSH', KEYS[1], ARGV[1])")
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		c := k.server(t, srv)
		ctx := confCtx(t)
		b, err := luascripts.NewBatcher(c, 16, nil)
		if err != nil {
			t.Fatal(err)
		}
		const goroutines, each, keys = 50, 20, 5
		landed := make([][]int64, goroutines) // where each call says it landed
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				key := fmt.Sprintf("%sbatched:%d", srv.Prefix(), g%keys)
				for i := range each {
					n, err := b.Do(ctx, key, appendTo, []string{key}, []any{fmt.Sprintf("%d:%d", g, i)}).Int64()
					if err != nil {
						t.Errorf("goroutine %d, call %d: %v", g, i, err)
						return
					}
					landed[g] = append(landed[g], n)
				}
			})
		}
		wg.Wait()
		lists := map[int][]string{}
		for i := range keys {
			list, err := rdb.LRange(context.Background(), fmt.Sprintf("%sbatched:%d", srv.Prefix(), i), 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != goroutines/keys*each {
				t.Errorf("key %d holds %d calls; want %d, each call run once", i, len(list), goroutines/keys*each)
			}
			lists[i] = list
		}
		for g, ns := range landed {
			list := lists[g%keys]
			for i, n := range ns {
				if want := fmt.Sprintf("%d:%d", g, i); n < 1 || int(n) > len(list) || list[n-1] != want {
					t.Errorf("goroutine %d, call %d got reply %d, which is not where it landed: another call's reply", g, i, n)
				}
				if i > 0 && n <= ns[i-1] {
					t.Errorf("goroutine %d's call %d landed at %d, before its call %d at %d", g, i, n, i-1, ns[i-1])
				}
			}
		}
	})
}

// A batched call waits for the batch in flight before it; if its context
// ends meanwhile, its caller has gone and takes the error as "did not
// happen": the call must not be sent with the next batch. Here the batch
// in flight is held by a frozen server, and a call whose deadline passes
// and one that is cancelled while they wait are never sent.
func TestConformanceABatchedCallWhoseContextEndsBeforeItsBatchGoesIsNotSent(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t, redistest.Own())
		rdb := srv.Client(t)
		confLoad(t, rdb, confCount)
		p := srv.Prefix()
		held, expired, cancelled := p+"held", p+"expired", p+"cancelled"
		written := confWatchFor(held)
		c := k.client(t, target{addrs: []string{srv.Addr()}, dial: written.dial})
		b, err := luascripts.NewBatcher(c, 16, nil)
		if err != nil {
			t.Fatal(err)
		}
		// One lane for all: the calls queue behind one another.
		const lane = "lane"
		if _, err := b.Do(confCtx(t), lane, confCount, []string{p + "warm"}, nil).Int64(); err != nil {
			t.Fatalf("before the freeze: %v", err) // and the connection is open
		}

		srv.Freeze(t)
		t.Cleanup(func() { srv.Thaw(t) })
		heldDone := make(chan luascripts.Reply, 1)
		hctx := confCtx(t)
		go func() { heldDone <- b.Do(hctx, lane, confCount, []string{held}, nil) }()
		select {
		case <-written.seen:
		case <-time.After(5 * time.Second):
			t.Fatal("the first call was not written within 5s")
		}
		// The lane's batch is in flight, held: these calls queue.
		cctx, cancel := context.WithCancel(context.Background())
		cancelledDone := make(chan luascripts.Reply, 1)
		go func() { cancelledDone <- b.Do(cctx, lane, confCount, []string{cancelled}, nil) }()
		ectx, ecancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer ecancel()
		r := b.Do(ectx, lane, confCount, []string{expired}, nil)
		if !errors.Is(r.Err, context.DeadlineExceeded) || errors.Is(r.Err, luascripts.ErrSentThenEnded) {
			t.Errorf("a call whose deadline passed while it queued: %v; want context.DeadlineExceeded, not sent", r.Err)
		}
		cancel()
		if r := <-cancelledDone; !errors.Is(r.Err, context.Canceled) || errors.Is(r.Err, luascripts.ErrSentThenEnded) {
			t.Errorf("a call cancelled while it queued: %v; want context.Canceled, not sent", r.Err)
		}

		srv.Thaw(t)
		if n, err := (<-heldDone).Int64(); err != nil || n != 1 {
			t.Errorf("the call held by the frozen server: %d, %v; want 1 once it thawed", n, err)
		}
		if n, err := b.Do(confCtx(t), lane, confCount, []string{p + "after"}, nil).Int64(); err != nil || n != 1 {
			t.Errorf("a call after the thaw: %d, %v; want 1", n, err)
		}
		for _, key := range []string{expired, cancelled} {
			if n := confCounted(t, rdb, key); n != 0 {
				t.Errorf("the call on %s, whose context ended before its batch went, ran %d times", key, n)
			}
		}
	})
}

// confWatch is a target's dial whose connections pass everything through,
// and that tells when a write carrying its marker has been written.
type confWatch struct {
	marker []byte
	seen   chan struct{}
	once   sync.Once
}

func confWatchFor(marker string) *confWatch {
	return &confWatch{marker: []byte(marker), seen: make(chan struct{})}
}

func (w *confWatch) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &confWatchConn{Conn: c, w: w}, nil
}

type confWatchConn struct {
	net.Conn
	w *confWatch
}

func (c *confWatchConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err == nil && bytes.Contains(p, c.w.marker) {
		c.w.once.Do(func() { close(c.w.seen) })
	}
	return n, err
}
