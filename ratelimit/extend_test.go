package ratelimit_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// A streaming job outlives the ttl it reserved with. Without an extension
// the server releases its reservation and the Commit charges nothing
// (ErrExpired): the job's whole cost goes uncounted. A Keeper extends it
// while the job runs, so the Commit charges what the job used.
func TestALongJobKeptByAKeeperIsChargedInsteadOfReleasedAtItsTTL(t *testing.T) {
	_, l := limiter(t, redistest.Start(t))
	ctx := context.Background()
	lim := ratelimit.SlidingCounter(100, time.Hour)
	const ttl = 300 * time.Millisecond
	const job = 1200 * time.Millisecond // four ttls

	// The failure: no keeper.
	bare := reserve(t, l, "bare", lim, 50, ttl)
	time.Sleep(job)
	if _, err := bare.Commit(ctx, 40); !errors.Is(err, ratelimit.ErrExpired) {
		t.Fatalf("a reservation left past its ttl: Commit %v, want ErrExpired (else this test shows nothing)", err)
	}
	wantRemaining(t, l, "bare", lim, 100) // the job's 40 went uncounted

	kept := reserve(t, l, "kept", lim, 50, ttl)
	k, err := kept.Keep(ctx, ttl/3)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(job)
	if err := k.Stop(); err != nil {
		t.Fatalf("the keeper lost the reservation: %v", err)
	}
	if k.Context().Err() == nil || context.Cause(k.Context()) != context.Canceled {
		t.Fatalf("a stopped Keeper's context: %v, cause %v", k.Context().Err(), context.Cause(k.Context()))
	}
	res, err := kept.Commit(ctx, 40)
	if err != nil {
		t.Fatalf("a kept reservation's Commit after %v with a ttl of %v: %v", job, ttl, err)
	}
	if res.Granted != 40 {
		t.Fatalf("charged %d, want 40", res.Granted)
	}
	wantRemaining(t, l, "kept", lim, 60)
}

// Extend moves the expiry by exactly its duration (Expires says where),
// and a reservation past its expiry is not brought back: it was given
// back, and an extension that revived it would charge it twice.
func TestExtendMovesTheExpiryAndNeverRevivesAReleasedReservation(t *testing.T) {
	clk := newClock(epoch)
	_, l := limiter(t, redistest.Start(t), ratelimit.WithServerTimeForTests(clk.Now))
	ctx := context.Background()
	p := three(10)
	rs := reserve(t, l, "tenant", p, 4, time.Minute)
	before := rs.Expires
	if err := rs.Extend(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := rs.Expires.Sub(before); got != 30*time.Second {
		t.Fatalf("Expires moved %v, want 30s", got)
	}
	clk.Add(80 * time.Second) // past the first expiry, before the second
	wantRemaining(t, l, "tenant", p, 6)
	if _, err := rs.Commit(ctx, 4); err != nil {
		t.Fatalf("Commit within the extended expiry: %v", err)
	}
	wantRemaining(t, l, "tenant", p, 6)

	gone := reserve(t, l, "gone", p, 4, time.Minute)
	clk.Add(2 * time.Minute)
	if err := gone.Extend(ctx, time.Hour); !errors.Is(err, ratelimit.ErrExpired) {
		t.Fatalf("Extend past the expiry: %v, want ErrExpired", err)
	}
	// The next reservation call of the rule releases it: the refused
	// Extend kept nothing charged.
	reserve(t, l, "gone", p, 1, time.Minute)
	wantRemaining(t, l, "gone", p, 9)
	if err := gone.Extend(ctx, time.Hour); !errors.Is(err, ratelimit.ErrSettled) {
		t.Fatalf("Extend of a reservation found expired: %v, want ErrSettled without a round trip", err)
	}
	if err := rs.Extend(ctx, time.Second); !errors.Is(err, ratelimit.ErrSettled) {
		t.Fatalf("Extend of a committed reservation: %v, want ErrSettled", err)
	}
}

// An extension whose reply was lost may have moved the expiry that Commit
// names the reservation by. Were Commit to send the old expiry, it would
// not find the reservation and would report it expired, charging nothing
// for work done.
func TestCommitAfterAnExtensionWhoseReplyWasLostFindsTheReservation(t *testing.T) {
	clk := newClock(epoch)
	c, l := limiter(t, redistest.Start(t), ratelimit.WithServerTimeForTests(clk.Now))
	var lose loseReply
	c.AddHook(&lose)
	ctx := context.Background()
	p := three(10)
	rs := reserve(t, l, "tenant", p, 5, time.Minute)
	lose.armed.Store(true)
	if err := rs.Extend(ctx, time.Minute); err == nil {
		t.Fatal("the reply was dropped, yet Extend returned no error")
	}
	clk.Add(90 * time.Second) // past the expiry Commit knew, before the one the server has
	res, err := rs.Commit(ctx, 3)
	if err != nil {
		t.Fatalf("Commit after a lost extension: %v", err)
	}
	if res.Granted != 3 {
		t.Fatalf("charged %d, want 3", res.Granted)
	}
	wantRemaining(t, l, "tenant", p, 7)
}

// A Keeper whose reservation is settled under it ends, and says so: work
// under its Context must not go on believing the reservation held.
func TestAKeeperEndsWhenItsReservationIsSettled(t *testing.T) {
	_, l := limiter(t, redistest.Start(t))
	ctx := context.Background()
	rs := reserve(t, l, "tenant", ratelimit.GCRA(10, time.Hour, 10), 2, 200*time.Millisecond)
	k, err := rs.Keep(ctx, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-k.Context().Done():
	case <-time.After(2 * time.Second):
		t.Fatal("the Keeper still runs a second after its reservation was canceled")
	}
	if cause := context.Cause(k.Context()); !errors.Is(cause, ratelimit.ErrSettled) {
		t.Fatalf("cause %v, want ErrSettled", cause)
	}
	if err := k.Stop(); !errors.Is(err, ratelimit.ErrSettled) {
		t.Fatalf("Stop: %v, want ErrSettled", err)
	}
}

// Keep(ctx, 10), meant as ten seconds, is ten nanoseconds: it extended the
// reservation tens of thousands of times a second, every extension a script
// call. An interval under a millisecond is refused before anything is sent.
func TestAKeepIntervalOfNanosecondsIsRefusedInsteadOfExtendingThousandsOfTimesASecond(t *testing.T) {
	_, l := limiter(t, redistest.Start(t))
	ctx := context.Background()
	rs := reserve(t, l, "tenant", ratelimit.GCRA(10, time.Hour, 10), 2, time.Minute)
	for _, d := range []time.Duration{10, time.Microsecond, time.Millisecond - 1} {
		if k, err := rs.Keep(ctx, d); !errors.Is(err, ratelimit.ErrInvalidTTL) {
			if k != nil {
				_ = k.Stop()
			}
			t.Errorf("Keep(%v): %v, want ErrInvalidTTL", d, err)
		}
	}
	k, err := rs.Keep(ctx, time.Millisecond)
	if err != nil {
		t.Fatalf("Keep of a millisecond: %v", err)
	}
	if err := k.Stop(); err != nil {
		t.Fatal(err)
	}
}

// Bad Keep and Extend input is a typed error before any round trip, and a
// zero Keeper answers without panicking.
func TestBadExtendAndKeepInputIsATypedError(t *testing.T) {
	_, l := limiter(t, redistest.Start(t))
	ctx := context.Background()
	rs := reserve(t, l, "tenant", ratelimit.GCRA(10, time.Hour, 10), 2, time.Minute)
	for _, d := range []time.Duration{0, -time.Second, time.Microsecond, ratelimit.MaxReservationTTL + time.Millisecond} {
		if err := rs.Extend(ctx, d); !errors.Is(err, ratelimit.ErrInvalidTTL) {
			t.Errorf("Extend(%v): %v, want ErrInvalidTTL", d, err)
		}
	}
	for _, d := range []time.Duration{0, -time.Second, time.Minute, time.Hour} {
		if _, err := rs.Keep(ctx, d); !errors.Is(err, ratelimit.ErrInvalidTTL) {
			t.Errorf("Keep(%v) of a reservation of a minute: %v, want ErrInvalidTTL", d, err)
		}
	}
	var zero ratelimit.Reservation
	if _, err := zero.Keep(ctx, time.Second); !errors.Is(err, ratelimit.ErrSettled) {
		t.Errorf("Keep of a zero Reservation: %v, want ErrSettled", err)
	}
	if err := zero.Extend(ctx, time.Second); !errors.Is(err, ratelimit.ErrSettled) {
		t.Errorf("Extend of a zero Reservation: %v, want ErrSettled", err)
	}
	var k ratelimit.Keeper
	if err := k.Stop(); !errors.Is(err, ratelimit.ErrSettled) {
		t.Errorf("a zero Keeper's Stop: %v, want ErrSettled", err)
	}
	if k.Context().Err() == nil {
		t.Error("a zero Keeper's Context has not ended")
	}
	rejected := reserve(t, l, "tenant", ratelimit.GCRA(10, time.Hour, 10), 10, time.Minute)
	if _, err := rejected.Keep(ctx, time.Second); !errors.Is(err, ratelimit.ErrSettled) {
		t.Errorf("Keep of a rejected reservation: %v, want ErrSettled", err)
	}
}

// x/time/rate's users expect a reservation to say when, and to wait for
// it: ReserveWait reserves once the RetryAfter comes, and refuses at once,
// without sleeping in vain, a wait that would pass the deadline, returning
// the rejection that says when.
func TestReserveWaitReservesWhenTheRetryAfterComesAndNotPastTheDeadline(t *testing.T) {
	_, l := limiter(t, redistest.Start(t))
	ctx := context.Background()
	lim := ratelimit.GCRA(5, time.Second, 1) // one per 200ms
	reserve(t, l, "tenant", lim, 1, time.Minute)

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	rs, err := l.ReserveWait(short, "tenant", lim, 1, time.Minute)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a wait of ~200ms under a 50ms deadline: %v, want DeadlineExceeded", err)
	}
	if took := time.Since(start); took > 40*time.Millisecond {
		t.Errorf("refused after %v: it slept although the wait passed the deadline", took)
	}
	if rs == nil || rs.Result.Allowed || rs.Result.RetryAfter <= 0 {
		t.Fatalf("the rejection returned with the error: %+v", rs)
	}

	long, cancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel2()
	start = time.Now()
	rs, err = l.ReserveWait(long, "tenant", lim, 1, time.Minute)
	if err != nil || !rs.Result.Allowed {
		t.Fatalf("ReserveWait: %+v, %v", rs, err)
	}
	took := time.Since(start)
	t.Logf("reserved after %v", took)
	if took < 100*time.Millisecond {
		t.Errorf("reserved after %v: before the RetryAfter (~200ms after the first)", took)
	}
	if _, err := rs.Commit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := l.ReserveWait(ctx, "tenant", lim, 2, time.Minute); !errors.Is(err, ratelimit.ErrInvalidN) {
		t.Fatalf("ReserveWait of more than the burst: %v, want ErrInvalidN at once", err)
	}
}

// A hook that counts reservations sees ReserveWait's attempts as the
// Reserves they are and the whole wait once, and each extension: a
// dashboard of reservations misses none of them.
func TestReserveWaitAndExtendReachTheHook(t *testing.T) {
	var mu sync.Mutex
	var events []ratelimit.Event
	_, l := limiter(t, redistest.Start(t), ratelimit.WithHook(func(_ context.Context, e ratelimit.Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}))
	ctx := context.Background()
	lim := ratelimit.GCRA(2, time.Second, 1) // one per 500ms: the second attempt comes well before
	reserve(t, l, "tenant", lim, 1, time.Minute)
	rs, err := l.ReserveWait(ctx, "tenant", lim, 1, time.Minute)
	if err != nil || !rs.Result.Allowed {
		t.Fatalf("%+v, %v", rs, err)
	}
	if err := rs.Extend(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var ops []string
	for _, e := range events {
		ops = append(ops, string(e.Op)+":"+string(e.Outcome))
	}
	t.Logf("%v", ops)
	want := []string{"reserve:allowed", "reserve:rejected", "reserve:allowed", "wait:allowed", "extend:allowed"}
	if !slices.Equal(ops, want) {
		t.Fatalf("events %v, want %v", ops, want)
	}
}
