package luascripts_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// push appends ARGV[1] to the list KEYS[1] and returns the list's length.
var push = luascripts.New("push", "return redis.call('RPUSH', KEYS[1], ARGV[1])")

// hold keeps the server busy for ARGV[1] µs, then increments KEYS[1]: a
// batch that carries it stays in flight that long.
var hold = luascripts.New("hold", `
local t0 = redis.call('TIME')
local start = tonumber(t0[1]) * 1000000 + tonumber(t0[2])
while true do
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000000 + tonumber(t[2]) - start >= tonumber(ARGV[1]) then break end
end
return redis.call('INCR', KEYS[1])`)

// batcher returns a Batcher of size on a server of its own, the server's
// go-redis client, and the count of its pipelines.
func batcher(t *testing.T, size int) (*luascripts.Batcher, *redistest.Server, *redis.Client, *redistest.PipelineCount) {
	t.Helper()
	s := redistest.Start(t)
	rdb := s.Client(t, func(o *redis.Options) { o.PoolSize = 100 })
	count := &redistest.PipelineCount{}
	loadScripts(t, rdb, push)
	rdb.AddHook(count)
	b, err := luascripts.NewBatcher(goredisadapter.New(rdb), size, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b, s, rdb, count
}

// Calls that come while a batch is in flight share the next round trip,
// each still its own script call with its own reply, never more than size
// to a round trip; a key's calls from one goroutine run in its order.
func TestBatchedCallsShareRoundTripsAndEachGetsItsOwnReply(t *testing.T) {
	const size, goroutines, each = 8, 40, 25
	b, s, rdb, count := batcher(t, size)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			key := fmt.Sprintf("%sk%d", s.Prefix(), g%5)
			for i := range each {
				v := fmt.Sprintf("%d:%d", g, i)
				n, err := b.Do(ctx, key, push, []string{key}, []any{v}).Int64()
				if err != nil || n < 1 {
					errs <- fmt.Errorf("goroutine %d call %d: %d, %v", g, i, n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	pipelines, cmds := count.Pipelines.Load(), count.Cmds.Load()
	t.Logf("%d calls in %d round trips (batches of at most %d)", cmds, pipelines, size)
	if cmds != goroutines*each {
		t.Fatalf("%d script calls sent, want %d: a call was sent twice or not at all", cmds, goroutines*each)
	}
	if pipelines >= cmds {
		t.Fatalf("%d round trips for %d calls: nothing was batched", pipelines, cmds)
	}
	if float64(cmds)/float64(pipelines) > size {
		t.Fatalf("%.1f calls per round trip, above the batch size %d", float64(cmds)/float64(pipelines), size)
	}
	// Each goroutine's values are in its own order in its key's list.
	for k := range 5 {
		vals, err := rdb.LRange(ctx, fmt.Sprintf("%sk%d", s.Prefix(), k), 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		last := map[int]int{}
		for _, v := range vals {
			var g, i int
			fmt.Sscanf(v, "%d:%d", &g, &i)
			if prev, ok := last[g]; ok && i != prev+1 {
				t.Fatalf("key %d: goroutine %d's value %d after %d", k, g, i, prev)
			}
			last[g] = i
		}
	}
}

// A call whose context ends while it waits for the batch in flight is not
// sent: it returns its context's error and the server never runs it.
func TestABatchedCallThatEndsBeforeItsBatchGoesIsNeverSent(t *testing.T) {
	b, s, written := heldBatcher(t)
	ctx := context.Background()
	key := s.Prefix() + "n"
	busy := make(chan error, 1)
	go func() { busy <- b.Do(ctx, key, hold, []string{key}, []any{300_000}).Err }() // 300 ms in flight
	<-written
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	err := b.Do(short, key, incr, []string{key}, nil).Err
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, luascripts.ErrSentThenEnded) {
		t.Fatalf("a call that timed out while queued: %v, want its deadline, not sent", err)
	}
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	// The lane is idle again: a last call goes at once and reads the count.
	if n, err := b.Do(ctx, key, incr, []string{key}, nil).Int(); err != nil || n != 2 {
		t.Fatalf("count after the held call and one more: %d, %v; want 2 (3: the timed-out call ran)", n, err)
	}
}

// A call that ends while its batch is in flight returns at once, saying it
// may have run; the batch goes on for the others, led by the call with the
// latest deadline, and its reply reaches them.
func TestABatchedCallThatEndsInFlightReturnsAtOnceAndTheOthersGetTheirReplies(t *testing.T) {
	b, s, written := heldBatcher(t)
	ctx := context.Background()
	key := s.Prefix() + "n"
	first := make(chan error, 1)
	go func() { first <- b.Do(ctx, key, hold, []string{key}, []any{100_000}).Err }()
	<-written
	// Two calls queue behind the first: they go together in the next
	// batch, which the second hold keeps in flight for 400 ms.
	long, cancelLong := context.WithTimeout(ctx, 10*time.Second)
	defer cancelLong()
	// The leader of a batch, which sends it, is the call with the latest
	// deadline (a call without one, first): the short call has an earlier
	// one, so the long call leads and the short is cancelled by hand.
	short, cancelShort := context.WithTimeout(ctx, 5*time.Second)
	type result struct {
		n   int
		err error
	}
	got := make(chan result, 2)
	go func() {
		n, err := b.Do(long, key, hold, []string{key}, []any{400_000}).Int()
		got <- result{n, err}
	}()
	go func() {
		n, err := b.Do(short, key, incr, []string{key}, nil).Int()
		got <- result{n, err}
	}()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	<-written // the second batch, with both calls, is on the wire
	cancelShort()
	start := time.Now()
	r := <-got
	if !errors.Is(r.err, context.Canceled) || !errors.Is(r.err, luascripts.ErrSentThenEnded) {
		t.Fatalf("a call cancelled while its batch was in flight: %d, %v; want Canceled and ErrSentThenEnded", r.n, r.err)
	}
	if took := time.Since(start); took > 200*time.Millisecond {
		t.Fatalf("it returned %v after its cancellation, not at once", took)
	}
	if r = <-got; r.err != nil || r.n < 2 {
		t.Fatalf("the batch's other call: %d, %v; want its reply", r.n, r.err)
	}
}

// heldBatcher returns a Batcher on a server of its own and a channel that
// receives each time a batch that carries the hold script is written to
// the server: from then, that batch is in flight for as long as it holds.
func heldBatcher(t *testing.T) (*luascripts.Batcher, *redistest.Server, <-chan struct{}) {
	t.Helper()
	s := redistest.Start(t)
	written := make(chan struct{}, 4)
	rdb := s.Client(t, func(o *redis.Options) {
		o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &signalConn{Conn: c, marker: []byte(hold.SHA1()), written: written}, nil
		}
	})
	loadScripts(t, rdb, hold, incr)
	b, err := luascripts.NewBatcher(goredisadapter.New(rdb), 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b, s, written
}

// loadScripts caches scripts on the server, so that no call of a test
// answers NOSCRIPT and goes twice on the wire.
func loadScripts(t *testing.T, rdb *redis.Client, scripts ...*luascripts.Script) {
	t.Helper()
	for _, s := range scripts {
		if err := rdb.ScriptLoad(context.Background(), s.Source()).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// A signalConn signals each write that carries marker.
type signalConn struct {
	net.Conn
	marker  []byte
	written chan<- struct{}
}

func (c *signalConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err == nil && bytes.Contains(p, c.marker) {
		c.written <- struct{}{}
	}
	return n, err
}

func TestNewBatcherRefusesASizeBelowOne(t *testing.T) {
	s := redistest.Start(t)
	for _, size := range []int{0, -1} {
		if _, err := luascripts.NewBatcher(goredisadapter.New(s.Client(t)), size, nil); err == nil {
			t.Errorf("size %d accepted", size)
		}
	}
}

// An Exec of the caller's own sends each batch; every call gets the Reply
// the Exec set, and a call the Exec left without one says so rather than
// read as a null reply.
func TestABatchersExecSendsTheBatchesAndItsRepliesReachTheirCalls(t *testing.T) {
	s := redistest.Start(t)
	var mu sync.Mutex
	var sizes []int
	exec := func(ctx context.Context, c luascripts.Client, calls []luascripts.Call) {
		mu.Lock()
		sizes = append(sizes, len(calls))
		mu.Unlock()
		luascripts.Send(ctx, c, calls)
	}
	b, err := luascripts.NewBatcher(goredisadapter.New(s.Client(t)), 4, exec)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			key := fmt.Sprintf("%se%d", s.Prefix(), i)
			if n, err := b.Do(ctx, key, incr, []string{key}, nil).Int(); err != nil || n != 1 {
				t.Errorf("call %d: %d, %v", i, n, err)
			}
		})
	}
	wg.Wait()
	total := 0
	for _, n := range sizes {
		if n > 4 {
			t.Fatalf("a batch of %d calls, above the size 4", n)
		}
		total += n
	}
	if total != 20 {
		t.Fatalf("the Exec saw %d calls, want 20", total)
	}
}

// A call that a Cluster refuses while its slot is being moved (it did not
// run) used to be sent again inside its batch until the migration let it
// run or its time was up, and every call of its lane, on any key, waited
// behind it: one slot being moved held up half the names of a batching
// lock for as long as the move lasted. It now leaves the batch and is sent
// again by its caller; the lane goes on, and the refused call runs, once,
// when the migration ends.
func TestABatchedCallRefusedByAMigratingSlotDoesNotHoldUpItsLane(t *testing.T) {
	c := redistest.StartCluster(t)
	rdb := c.Client(t)
	ctx := context.Background()
	if err := rdb.Set(ctx, "{m}a", 0, 0).Err(); err != nil {
		t.Fatal(err)
	}
	from, _, abandon := c.BeginSlotMigration(t, "{m}a")
	b, err := luascripts.NewBatcher(goredisadapter.New(rdb), 8, nil)
	if err != nil {
		t.Fatal(err)
	}
	refused := make(chan luascripts.Reply, 1)
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	go func() { refused <- b.Do(rctx, "lane", incrBoth, []string{"{m}a", "{m}b"}, nil) }()
	// The refused call is in the Batcher once the slot's owner has
	// answered it TRYAGAIN.
	owner := from.Client(t)
	for tryagain := 0; tryagain == 0; {
		info, err := owner.Info(ctx, "errorstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		if _, v, ok := strings.Cut(info, "errorstat_TRYAGAIN:count="); ok {
			tryagain, _ = strconv.Atoi(strings.TrimSpace(strings.SplitN(v, "\r", 2)[0]))
		}
		time.Sleep(time.Millisecond)
	}
	// Calls on another key through the same lane go meanwhile.
	const others = 20
	for i := range others {
		octx, ocancel := context.WithTimeout(ctx, 5*time.Second)
		n, err := b.Do(octx, "lane", incr, []string{"{o}x"}, nil).Int()
		ocancel()
		if err != nil || n != i+1 {
			t.Fatalf("call %d on another key of the lane: %d, %v", i+1, n, err)
		}
	}
	select {
	case r := <-refused:
		t.Fatalf("the refused call returned (%v) before the migration ended: the other calls waited for it", r.Err)
	default:
	}
	abandon()
	if n, err := (<-refused).Int(); err != nil || n != 1 {
		t.Fatalf("the refused call after the migration was abandoned: %d, %v; want 1", n, err)
	}
	if a, _ := rdb.Get(ctx, "{m}a").Int(); a != 1 {
		t.Fatalf("{m}a = %d, want 1: a refused send ran", a)
	}
}
