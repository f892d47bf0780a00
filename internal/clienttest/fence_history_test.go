package clienttest_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// The failover histories of package fence's tests (fence_test.go runs
// them): lock holders write under the fence while their locks' primary
// fails over, and the histories count the stale writes that got through.

// fenceTokenScheme is one way lock issues fencing tokens.
type fenceTokenScheme struct {
	name string
	opts []lock.Option
	// monotonic: a token issued after a failover is above every token
	// issued before it, so not one stale write may be accepted.
	monotonic bool
}

// fenceTokenSchemes returns the token schemes the failover histories run
// side by side, each with its own lock name and keys: the counter alone
// (lock.WithCounterTokens), which a failover can move backwards, and lock's
// default, max(counter+1, the server's clock in µs), which it must not.
func fenceTokenSchemes() []fenceTokenScheme {
	return []fenceTokenScheme{
		{name: "counter-only", opts: []lock.Option{lock.WithCounterTokens()}},
		{name: "hybrid clock", monotonic: true},
	}
}

// Failover histories. The core runs in every `go test`; SENTINEL_SOAK=5m
// (any duration) keeps the faults coming for that long instead.
const (
	fenceMinFailovers = 20
	fenceMinWrites    = 10_000 // per monotonic scheme, through Sentinel
	fenceResources    = 4      // locks per scheme, each guarding a key of its own
	fenceWorkers      = 3      // holders contending for each lock, each on its own client
)

const fenceHistoryLock = "history"

func fenceLockPrefix(scheme, resource int) string { return fmt.Sprintf("s%dr%d:", scheme, resource) }

// fenceLockKey follows the key layout in lock's package doc.
func fenceLockKey(scheme, resource int) string {
	return fenceLockPrefix(scheme, resource) + "{" + fenceHistoryLock + "}"
}

type fenceHolding struct {
	token     int64
	sent, got time.Duration // the acquire's call and reply, since the start
}

type fenceWrite struct {
	holder     int
	sent, done time.Duration
	accepted   bool
	inLease    bool // sent before the holder's lease deadline
}

// fenceHistory is what one scheme's holders did.
type fenceHistory struct {
	scheme fenceTokenScheme
	start  time.Time

	mu       sync.Mutex
	holdings []fenceHolding
	writes   []fenceWrite
	writeN   atomic.Int64
	unknown  atomic.Int64 // acquires and writes whose outcome never came
}

func (h *fenceHistory) since() time.Duration { return time.Since(h.start) }

func (h *fenceHistory) hold(token int64, sent, got time.Duration) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holdings = append(h.holdings, fenceHolding{token: token, sent: sent, got: got})
	return len(h.holdings) - 1
}

func (h *fenceHistory) wrote(w fenceWrite) {
	h.mu.Lock()
	h.writes = append(h.writes, w)
	h.mu.Unlock()
	h.writeN.Add(1)
}

// fenceFigures are what a history shows.
type fenceFigures struct {
	holders, accepted, refused, refusedInLease int
	stale, reissued                            int
}

func (f fenceFigures) add(g fenceFigures) fenceFigures {
	return fenceFigures{f.holders + g.holders, f.accepted + g.accepted, f.refused + g.refused,
		f.refusedInLease + g.refusedInLease, f.stale + g.stale, f.reissued + g.reissued}
}

func (f fenceFigures) String() string {
	return fmt.Sprintf("%d holders, %d writes accepted, %d refused (%d of them within the writer's lease), "+
		"%d stale writes accepted, %d tokens reissued (a later holder given a token not above an earlier one's)",
		f.holders, f.accepted, f.refused, f.refusedInLease, f.stale, f.reissued)
}

// analyse counts stale writes: a write by X accepted although it was sent
// after a write of a holder Y whose acquire was sent after X's acquire
// returned. Y's write need not have been accepted: if Y's token was refused
// and X's accepted, the fence let the superseded holder through. With
// tokens that follow acquisition order it cannot happen: Y's attempt was
// either accepted (the mark is at least Y's token, above X's) or refused by
// a mark above Y's token. Both orders are real-time facts measured by one
// clock, so only certain staleness is counted.
func (h *fenceHistory) analyse() fenceFigures {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := fenceFigures{holders: len(h.holdings)}
	type mark struct{ done, acquired time.Duration }
	var marks []mark
	for _, w := range h.writes {
		marks = append(marks, mark{w.done, h.holdings[w.holder].sent})
		switch {
		case w.accepted:
			f.accepted++
		default:
			f.refused++
			if w.inLease {
				f.refusedInLease++
			}
		}
	}
	sort.Slice(marks, func(i, j int) bool { return marks[i].done < marks[j].done })
	// latest[i]: the latest acquire among the writers of marks[:i+1].
	latest := make([]time.Duration, len(marks))
	for i, m := range marks {
		latest[i] = m.acquired
		if i > 0 {
			latest[i] = max(latest[i], latest[i-1])
		}
	}
	for _, w := range h.writes {
		if !w.accepted {
			continue
		}
		i := sort.Search(len(marks), func(i int) bool { return marks[i].done >= w.sent }) - 1
		if i >= 0 && latest[i] > h.holdings[w.holder].got {
			f.stale++
		}
	}
	// Reissue: Y acquired strictly after X returned, yet tY <= tX.
	byGot := slices.Clone(h.holdings)
	sort.Slice(byGot, func(i, j int) bool { return byGot[i].got < byGot[j].got })
	byCall := slices.Clone(h.holdings)
	sort.Slice(byCall, func(i, j int) bool { return byCall[i].sent < byCall[j].sent })
	var highest int64 // the highest token among holders whose acquire returned before y's was sent
	j := 0
	for _, y := range byCall {
		for j < len(byGot) && byGot[j].got < y.sent {
			highest = max(highest, byGot[j].token)
			j++
		}
		if y.token <= highest {
			f.reissued++
		}
	}
	return f
}

// runFencedHistory runs every token scheme's holders side by side while
// fault fails the locks' primary over, at least failovers times, and until
// each monotonic scheme made minWrites writes. Each holder's lock runs on a
// client newClient makes; the fenced store lives on a server of its own, as
// the resource a lock protects would, through a client of kind k.
func runFencedHistory(t *testing.T, k kind, newClient func(testing.TB) luascripts.Client,
	fault func(testing.TB, int) (string, redistest.Failover), failovers int, minWrites int64) {
	resource := redistest.Start(t)
	store, err := fence.New(k.server(t, resource))
	if err != nil {
		t.Fatal(err)
	}
	soak := time.Duration(0)
	if v := os.Getenv("SENTINEL_SOAK"); v != "" {
		if soak, err = time.ParseDuration(v); err != nil {
			t.Fatalf("SENTINEL_SOAK=%q: %v", v, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var histories []*fenceHistory
	start := time.Now()
	for si, sc := range fenceTokenSchemes() {
		for ri := range fenceResources {
			h := &fenceHistory{scheme: sc, start: start}
			histories = append(histories, h)
			key := store.Key(fmt.Sprintf("%sscheme%d:resource%d", resource.Prefix(), si, ri))
			for w := range fenceWorkers {
				who := fmt.Sprintf("s%dr%dw%d", si, ri, w)
				opts := append([]lock.Option{lock.WithPrefix(fenceLockPrefix(si, ri)), lock.WithOwner(who)}, sc.opts...)
				l, err := lock.New(newClient(t), opts...)
				if err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					h.holder(ctx, l, store, who, key, rand.New(rand.NewPCG(uint64(si*fenceResources+ri), uint64(w))))
				}()
			}
		}
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			wg.Wait()
		}
	}
	defer stop()

	// The holders must be under way before the first fault, and between
	// faults each scheme makes some progress, so that every failover cuts
	// into a running history.
	progress := func(within time.Duration) {
		want := make([]int64, len(histories))
		for i, h := range histories {
			want[i] = h.writeN.Load() + 10
		}
		deadline := time.Now().Add(within)
		for i := 0; i < len(histories); {
			if histories[i].writeN.Load() >= want[i] {
				i++
				continue
			}
			if time.Now().After(deadline) {
				t.Fatalf("scheme %q made no progress in %v after the last failover (%d writes)",
					histories[i].scheme.name, within, histories[i].writeN.Load())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	writes := func(sc fenceTokenScheme) int64 {
		var n int64
		for _, h := range histories {
			if h.scheme.name == sc.name {
				n += h.writeN.Load()
			}
		}
		return n
	}
	enough := func(n int) bool {
		if n < failovers || time.Since(start) < soak {
			return false
		}
		for _, sc := range fenceTokenSchemes() {
			if sc.monotonic && writes(sc) < minWrites {
				return false
			}
		}
		return true
	}
	var took []time.Duration
	faults := map[string]int{}
	for n := 0; !enough(n); n++ {
		progress(20 * redistest.SentinelFailoverTimeout)
		what, fo := fault(t, n)
		faults[what]++
		took = append(took, fo.Took)
	}
	progress(20 * redistest.SentinelFailoverTimeout)
	stop()

	slices.Sort(took)
	t.Logf("%d failovers %v in %v; fault to agreed new primary: median %v, max %v",
		len(took), faults, time.Since(start).Round(time.Second), took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
	for _, sc := range fenceTokenSchemes() {
		var f fenceFigures
		var unknown int64
		for _, h := range histories {
			if h.scheme.name == sc.name {
				f = f.add(h.analyse())
				unknown += h.unknown.Load()
			}
		}
		t.Logf("%s tokens, %d locks: %v; %d calls with no outcome (timeouts during faults)", sc.name, fenceResources, f, unknown)
		if f.accepted == 0 {
			t.Errorf("%s: no write was accepted", sc.name)
		}
		if sc.monotonic {
			if int64(f.accepted+f.refused) < minWrites {
				t.Errorf("%s: %d writes, want at least %d", sc.name, f.accepted+f.refused, minWrites)
			}
			if f.stale != 0 || f.reissued != 0 {
				t.Errorf("%s: %d stale writes accepted and %d tokens reissued, want 0 and 0", sc.name, f.stale, f.reissued)
			}
		}
	}
}

// fenceOpTimeout bounds each call, so that a holder whose primary froze gives up
// on it in about the time Sentinel takes to call the primary down.
const fenceOpTimeout = 2 * redistest.SentinelDownAfter

// holder takes the lock again and again until ctx ends.
func (h *fenceHistory) holder(ctx context.Context, l *lock.Locker, store *fence.Store, who, key string, rng *rand.Rand) {
	wait := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	for seq := 0; ctx.Err() == nil; seq++ {
		ttl := time.Duration(30+rng.IntN(120)) * time.Millisecond
		sent := h.since()
		actx, cancel := context.WithTimeout(ctx, fenceOpTimeout)
		lease, err := l.Acquire(actx, fenceHistoryLock, ttl)
		cancel()
		var held *lock.HeldError
		switch {
		case errors.As(err, &held):
			wait(min(held.TTL, 10*time.Millisecond) + time.Millisecond)
			continue
		case err != nil:
			if ctx.Err() == nil {
				h.unknown.Add(1)
			}
			wait(10 * time.Millisecond)
			continue
		}
		id := h.hold(lease.Token, sent, h.since())
		deadline := lease.Deadline(ttl / 5)
		writes := 1 + rng.IntN(12)
		// One holder in ten pauses past its lease (a GC pause, a slow
		// disk) before its last write: the stale writer fencing is for.
		overrun := rng.IntN(10) == 0
		for i := range writes {
			if i == writes-1 && overrun {
				if !wait(time.Until(lease.Deadline(0)) + time.Duration(rng.IntN(int(ttl)))) {
					return
				}
			} else if time.Now().After(deadline) {
				break // a careful holder stops writing at its deadline
			}
			w := fenceWrite{holder: id, sent: h.since(), inLease: time.Now().Before(deadline)}
			wctx, cancel := context.WithTimeout(ctx, fenceOpTimeout)
			err := store.Set(wctx, lease.Token, key, fmt.Sprintf("%s/%d/%d", who, seq, i))
			cancel()
			w.done = h.since()
			switch {
			case err == nil:
				w.accepted = true
				h.wrote(w)
			case errors.Is(err, fence.ErrStale):
				h.wrote(w)
			default:
				if ctx.Err() == nil {
					h.unknown.Add(1)
				}
			}
		}
		if !overrun && rng.IntN(6) != 0 { // else the lease expires
			rctx, cancel := context.WithTimeout(ctx, fenceOpTimeout)
			_, _ = l.Release(rctx, lease)
			cancel()
		}
	}
}

// The failover histories' figures count only certain staleness: a write
// accepted after a write of a holder that acquired strictly later. This
// checks the counting on hand-made histories, with no server.
func TestFenceStaleCountSeesAWriteAcceptedAfterALaterHoldersWriteAndNothingElse(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	h := &fenceHistory{}
	x := h.hold(7, ms(0), ms(1))   // X: acquired first
	y := h.hold(7, ms(10), ms(11)) // Y: strictly later, its token reissued
	h.wrote(fenceWrite{holder: y, sent: ms(12), done: ms(13), accepted: true})
	h.wrote(fenceWrite{holder: x, sent: ms(14), done: ms(15), accepted: true}) // X after Y wrote: stale
	h.wrote(fenceWrite{holder: x, sent: ms(12), done: ms(16), accepted: true}) // sent before Y's write ended: not certain
	if f := h.analyse(); f.stale != 1 || f.reissued != 1 || f.accepted != 3 {
		t.Fatalf("figures %+v, want 1 stale, 1 reissued, 3 accepted", f)
	}

	// Overlapping acquires are not ordered; a refused write of a later
	// holder still makes an earlier holder's later accepted write stale.
	h = &fenceHistory{}
	x = h.hold(8, ms(0), ms(5))
	y = h.hold(3, ms(4), ms(6)) // sent before X's acquire returned: not later
	z := h.hold(2, ms(20), ms(21))
	h.wrote(fenceWrite{holder: y, sent: ms(7), done: ms(8), accepted: true})
	h.wrote(fenceWrite{holder: x, sent: ms(9), done: ms(10), accepted: true})
	h.wrote(fenceWrite{holder: z, sent: ms(22), done: ms(23), inLease: true})
	h.wrote(fenceWrite{holder: x, sent: ms(24), done: ms(25), accepted: true})
	if f := h.analyse(); f.stale != 1 || f.reissued != 1 || f.refused != 1 || f.refusedInLease != 1 {
		t.Fatalf("figures %+v, want 1 stale (X after Z), 1 reissued (Z), 1 refused in lease", f)
	}
}
