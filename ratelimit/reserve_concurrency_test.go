package ratelimit_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// A held is one admitted reservation as a concurrent caller saw it, in µs
// of the one clock the server and this process share (loopback, one host).
type held struct {
	at, exp, amount int64
	committed       bool  // a Commit returned no error: it ran before the expiry
	canceled        bool  // a Cancel returned no error: canceled, or released by the TTL
	final           int64 // what a commit charged
	settleStart     int64 // when the settle was sent
}

// asOf is what h counts at server time t, at least: nothing once a cancel
// may have run or the TTL may have released it, its final charge once its
// commit may have run, its amount before.
func (h held) asOf(t int64) int64 {
	switch {
	case h.committed && t >= h.settleStart:
		return h.final
	case h.committed:
		return h.amount // sent before its expiry, so t < the expiry
	case t >= h.exp || h.canceled && t >= h.settleStart:
		return 0
	}
	return h.amount
}

// 200 goroutines reserve, commit below or at the amount, cancel, abandon
// (the TTL releases) and commit too late, on the server's clock, batched;
// at every admission, what was then charged plus outstanding must fit
// under the log's limit in its window and under GCRA's burst. A give-back
// of what a limit still counted for others, or a reservation that did not
// count against a later one, would exceed one.
func TestReservationsOf200GoroutinesNeverExceedALimit(t *testing.T) {
	s := redistest.Start(t)
	_, l := limiter(t, s, ratelimit.WithBatching(32))
	const win, ttl = 300 * time.Millisecond, 150 * time.Millisecond
	logLim, gcraLim := ratelimit.SlidingLog(200, win), ratelimit.GCRA(2000, time.Second, 150)
	p := ratelimit.Policy{logLim, ratelimit.SlidingCounter(250, win), gcraLim}
	run := 2 * time.Second
	if testing.Short() {
		run = 500 * time.Millisecond
	}
	var (
		mu       sync.Mutex
		all      []held
		expired  int
		rejected int
	)
	ctx := context.Background()
	end := time.Now().Add(run)
	together(t, 200, func(i int) (bool, error) {
		rng := rand.New(rand.NewPCG(uint64(i), 3))
		for time.Now().Before(end) {
			rs, err := l.Reserve(ctx, "shared", p, 1+rng.IntN(8), ttl)
			if err != nil {
				return false, err
			}
			if !rs.Result.Allowed {
				mu.Lock()
				rejected++
				mu.Unlock()
				time.Sleep(time.Duration(1+rng.IntN(10)) * time.Millisecond)
				continue
			}
			h := held{at: rs.At.UnixMicro(), exp: rs.Expires.UnixMicro(), amount: int64(rs.Amount)}
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
			switch op := rng.IntN(10); {
			case op < 6:
				actual := rng.IntN(rs.Amount + 1)
				h.settleStart = time.Now().UnixMicro()
				_, err := rs.Commit(ctx, actual)
				switch {
				case errors.Is(err, ratelimit.ErrExpired):
				case err != nil:
					return false, err
				default:
					h.committed, h.final = true, int64(actual)
				}
			case op < 8:
				h.settleStart = time.Now().UnixMicro()
				if _, err := rs.Cancel(ctx); err != nil {
					return false, err
				}
				h.canceled = true
			default: // abandoned: sometimes committed after its expiry
				if op == 9 {
					time.Sleep(ttl)
					if _, err := rs.Commit(ctx, rs.Amount); !errors.Is(err, ratelimit.ErrExpired) {
						return false, errors.New("commit past the TTL: not ErrExpired")
					}
					mu.Lock()
					expired++
					mu.Unlock()
				}
			}
			mu.Lock()
			all = append(all, h)
			mu.Unlock()
		}
		return true, nil
	})
	slices.SortFunc(all, func(a, b held) int { return int(a.at - b.at) })
	logWin := win.Microseconds()
	// GCRA: 500 µs of backlog a request, drained 1 per µs, 150 deep.
	const unit, depth = 500, 150 * 500
	worstLog, worstGCRA := int64(0), int64(0)
	from := 0
	for i, h := range all {
		for all[from].at <= h.at-logWin {
			from++
		}
		n := int64(0)
		for _, o := range all[from : i+1] {
			n += o.asOf(h.at)
		}
		// GCRA's backlog, replayed from the first reservation.
		var q, last int64
		for _, o := range all[:i+1] {
			q = max(q-(o.at-last), 0) + o.asOf(h.at)*unit
			last = o.at
		}
		worstLog, worstGCRA = max(worstLog, n), max(worstGCRA, q)
		if n > int64(logLim.N()) {
			t.Fatalf("%d charged and outstanding in the log's window ending at a reservation (limit %d)", n, logLim.N())
		}
		if q > depth {
			t.Fatalf("GCRA backlog of %d requests at a reservation (burst %d)", q/unit, gcraLim.Burst())
		}
	}
	t.Logf("%d reservations admitted, %d rejected, %d committed past the TTL; most in a log window %d of %d, deepest GCRA backlog %.1f of %d",
		len(all), rejected, expired, worstLog, logLim.N(), float64(worstGCRA)/unit, gcraLim.Burst())
	if len(all) < 200 || worstLog < int64(logLim.N())/2 {
		t.Fatalf("too little contention to test anything: %d admitted, %d at most in a window", len(all), worstLog)
	}
}
