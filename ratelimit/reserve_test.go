package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// three is a Policy of one limit of each algorithm, n per hour each: every
// reservation test runs on it, so each algorithm's give-back is exercised.
func three(n int) ratelimit.Policy {
	return ratelimit.Policy{ratelimit.SlidingLog(n, time.Hour), ratelimit.SlidingCounter(n, time.Hour), ratelimit.GCRA(n, time.Hour, n)}
}

func reserve(t *testing.T, l *ratelimit.Limiter, key string, r ratelimit.Rule, amount int, ttl time.Duration) *ratelimit.Reservation {
	t.Helper()
	rs, err := l.Reserve(context.Background(), key, r, amount, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func remaining(t *testing.T, l *ratelimit.Limiter, key string, r ratelimit.Rule) []int64 {
	t.Helper()
	res, err := l.Peek(context.Background(), key, r)
	if err != nil {
		t.Fatal(err)
	}
	return remainingOf(res)
}

func wantRemaining(t *testing.T, l *ratelimit.Limiter, key string, r ratelimit.Rule, want int64) {
	t.Helper()
	for i, got := range remaining(t, l, key, r) {
		if got != want {
			t.Fatalf("limit %d has %d left, want %d", i, got, want)
		}
	}
}

// A commit whose reply was lost is sent again by the caller; charging on
// each would leak quota on every retry (litellm's 429 leak).
func TestRetriedCommitChargesOnce(t *testing.T) {
	c, l := limiter(t, redistest.Start(t))
	var lose loseReply
	c.AddHook(&lose)
	ctx := context.Background()
	p := three(10)
	rs := reserve(t, l, "tenant", p, 8, time.Minute)
	wantRemaining(t, l, "tenant", p, 2)
	lose.armed.Store(true)
	if _, err := rs.Commit(ctx, 3); !errors.Is(err, errLost) {
		t.Fatalf("commit with its reply lost: %v", err)
	}
	wantRemaining(t, l, "tenant", p, 7) // the commit ran: 3 charged
	for range 2 {
		res, err := rs.Commit(ctx, 3)
		if err != nil && !errors.Is(err, ratelimit.ErrSettled) {
			t.Fatal(err)
		}
		if err == nil && res.Granted != 3 {
			t.Fatalf("retried commit reports %d charged, want 3", res.Granted)
		}
	}
	wantRemaining(t, l, "tenant", p, 7)
	// A retried cancel of a committed reservation gives nothing back.
	if _, err := rs.Cancel(ctx); !errors.Is(err, ratelimit.ErrSettled) {
		t.Fatalf("cancel after commit: %v, want ErrSettled", err)
	}
	wantRemaining(t, l, "tenant", p, 7)
}

// Over-estimating loses quota unless the rest comes back; a cancel gives
// everything back.
func TestCommitBelowTheReservationGivesTheRestBackAndCancelGivesAll(t *testing.T) {
	_, l := limiter(t, redistest.Start(t))
	ctx := context.Background()
	p := three(10)
	a := reserve(t, l, "k", p, 6, time.Minute)
	b := reserve(t, l, "k", p, 4, time.Minute)
	if rs := reserve(t, l, "k", p, 1, time.Minute); rs.Result.Allowed {
		t.Fatalf("an eleventh unit was reserved under limits of 10: %+v", rs.Result)
	}
	if _, err := a.Commit(ctx, 2); err != nil {
		t.Fatal(err)
	}
	wantRemaining(t, l, "k", p, 4)
	if _, err := b.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	wantRemaining(t, l, "k", p, 8)
}

// An actual above the reservation is charged as Take would: what fits,
// never past a limit, and the Result says when not all of it fitted.
func TestCommitAboveTheReservationChargesOnlyWhatFits(t *testing.T) {
	_, l := limiter(t, redistest.Start(t))
	ctx := context.Background()
	p := three(10)
	a := reserve(t, l, "k", p, 4, time.Minute)
	res, err := a.Commit(ctx, 6)
	if err != nil || !res.Allowed || res.Granted != 6 {
		t.Fatalf("commit of 6 on 4 reserved, 6 free: %+v %v", res, err)
	}
	wantRemaining(t, l, "k", p, 4)
	b := reserve(t, l, "k", p, 2, time.Minute)
	res, err = b.Commit(ctx, 9)
	if err != nil || res.Allowed || res.Granted != 4 {
		t.Fatalf("commit of 9 on 2 reserved, 2 more free: %+v %v, want 4 charged and not Allowed", res, err)
	}
	wantRemaining(t, l, "k", p, 0)
}

// A reservation must be refused as input, before any round trip, when it
// could never be valid; and a settled one cannot be settled again.
func TestBadReservationInputIsRefusedWithATypedError(t *testing.T) {
	_, l := limiter(t, redistest.Start(t))
	ctx := context.Background()
	lim := ratelimit.GCRA(10, time.Second, 5)
	for _, c := range []struct {
		name   string
		amount int
		ttl    time.Duration
		want   error
	}{
		{"zero amount", 0, time.Second, ratelimit.ErrInvalidN},
		{"negative amount", -1, time.Second, ratelimit.ErrInvalidN},
		{"amount above the burst", 6, time.Second, ratelimit.ErrInvalidN},
		{"zero ttl", 1, 0, ratelimit.ErrInvalidTTL},
		{"ttl under a millisecond", 1, time.Microsecond, ratelimit.ErrInvalidTTL},
		{"ttl above the maximum", 1, ratelimit.MaxReservationTTL + time.Millisecond, ratelimit.ErrInvalidTTL},
	} {
		if rs, err := l.Reserve(ctx, "k", lim, c.amount, c.ttl); !errors.Is(err, c.want) || rs != nil {
			t.Errorf("%s: %v %v, want %v", c.name, rs, err, c.want)
		}
	}
	if _, err := l.Reserve(ctx, "", lim, 1, time.Second); !errors.Is(err, ratelimit.ErrInvalidKey) {
		t.Errorf("empty key: %v", err)
	}
	rs := reserve(t, l, "k", lim, 2, time.Minute)
	if _, err := rs.Commit(ctx, -1); !errors.Is(err, ratelimit.ErrInvalidN) {
		t.Errorf("negative actual: %v", err)
	}
	if _, err := rs.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	for name, settle := range map[string]func() error{
		"commit": func() error { _, err := rs.Commit(ctx, 1); return err },
		"cancel": func() error { _, err := rs.Cancel(ctx); return err },
	} {
		if err := settle(); !errors.Is(err, ratelimit.ErrSettled) {
			t.Errorf("%s after cancel: %v, want ErrSettled", name, err)
		}
	}
	// A rejected reservation holds nothing to settle.
	full := reserve(t, l, "k", lim, 5, time.Minute)
	rejected := reserve(t, l, "k", lim, 1, time.Minute)
	if !full.Result.Allowed || rejected.Result.Allowed || rejected.Result.RetryAfter <= 0 {
		t.Fatalf("full %+v, rejected %+v", full.Result, rejected.Result)
	}
	if _, err := rejected.Commit(ctx, 1); !errors.Is(err, ratelimit.ErrSettled) {
		t.Errorf("commit of a rejected reservation: %v, want ErrSettled", err)
	}
	var none *ratelimit.Reservation
	if _, err := none.Cancel(ctx); !errors.Is(err, ratelimit.ErrSettled) {
		t.Errorf("nil reservation: %v", err)
	}
}

// A zero Reservation (a struct field never set by Reserve) has no Limiter
// behind it: settling it is a typed error, not a nil dereference.
func TestSettlingAZeroReservationIsATypedErrorNotAPanic(t *testing.T) {
	var zero ratelimit.Reservation
	ctx := context.Background()
	if _, err := zero.Commit(ctx, 1); !errors.Is(err, ratelimit.ErrSettled) {
		t.Errorf("Commit of a zero Reservation: %v, want ErrSettled", err)
	}
	if _, err := zero.Cancel(ctx); !errors.Is(err, ratelimit.ErrSettled) {
		t.Errorf("Cancel of a zero Reservation: %v, want ErrSettled", err)
	}
}

// A reservation left unsettled (a crashed caller) is released by the
// server's time: a commit after that charges nothing and says so.
func TestCommitAfterTheExpiryChargesNothingAndSaysSo(t *testing.T) {
	clk := newClock(epoch)
	_, l := limiter(t, redistest.Start(t), ratelimit.WithServerTimeForTests(clk.Now))
	ctx := context.Background()
	p := three(10)
	rs := reserve(t, l, "k", p, 7, time.Minute)
	if got, want := rs.Expires.Sub(rs.At), time.Minute; got != want {
		t.Fatalf("expires %v after it was reserved, want %v", got, want)
	}
	clk.Add(time.Minute - time.Microsecond)
	wantRemaining(t, l, "k", p, 3) // still held
	clk.Add(time.Microsecond)
	if _, err := rs.Commit(ctx, 7); !errors.Is(err, ratelimit.ErrExpired) {
		t.Fatalf("commit at the expiry: %v, want ErrExpired", err)
	}
	wantRemaining(t, l, "k", p, 10)
	if _, err := rs.Cancel(ctx); !errors.Is(err, ratelimit.ErrSettled) {
		t.Fatalf("cancel after the expired commit: %v", err)
	}
}

// crashConfig is the configuration of TestHelperReserverProcess.
type crashConfig struct {
	Addr, Prefix, Key string
	Amount, Limit     int
	TTL               time.Duration
}

// TestHelperReserverProcess is not a test: it is the reserver that
// TestCrashedReserverGivesBackByTheTTL kills, run in a process of its own
// (redistest.StartChild). It reserves, reports, and waits to be killed.
// Without a child configuration it returns at once.
func TestHelperReserverProcess(t *testing.T) {
	var cfg crashConfig
	if child, err := redistest.ChildConfig(&cfg); !child || err != nil {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	ctx, cancel := redistest.ChildContext()
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: cfg.Addr})
	defer c.Close()
	l, err := ratelimit.New(goredisadapter.New(c), ratelimit.WithPrefix(cfg.Prefix))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := l.Reserve(ctx, cfg.Key, three(cfg.Limit), cfg.Amount, cfg.TTL)
	if err != nil {
		t.Fatal(err)
	}
	redistest.Report("reserved", "allowed", rs.Result.Allowed, "expires", rs.Expires)
	<-ctx.Done()
}

// A process killed between Reserve and Commit never settles: without the
// server releasing the reservation by its TTL, its quota would be lost
// until the window ends (an hour here).
func TestCrashedReserverGivesBackByTheTTL(t *testing.T) {
	s := redistest.Start(t)
	_, l := limiter(t, s)
	const ttl = 800 * time.Millisecond
	p := three(10)
	child, err := redistest.StartChild(crashConfig{Addr: s.Addr(), Prefix: s.Prefix() + "rl:", Key: "crash", Amount: 8, Limit: 10, TTL: ttl},
		"-test.run=^TestHelperReserverProcess$", "-test.count=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		child.Stop()
		if t.Failed() {
			t.Logf("child stderr: %s", child.Stderr())
		}
	})
	ctx := context.Background()
	ev, _, err := child.Wait(ctx, 20*time.Second, 0, "reserved", nil)
	if err != nil || ev.Fields["allowed"] != "true" {
		t.Fatalf("child reserved: %+v %v", ev, err)
	}
	if err := child.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-child.Exited()
	expires := ev.Time("expires")
	if rs := reserve(t, l, "crash", p, 8, time.Minute); rs.Result.Allowed {
		t.Fatal("the killed process's reservation was not held")
	}
	// Poll until a reservation of the same size fits again; the bound is
	// the TTL plus slack for two busy cores.
	deadline := expires.Add(ttl + 2*time.Second)
	for {
		rs := reserve(t, l, "crash", p, 8, time.Minute)
		now := time.Now()
		if rs.Result.Allowed {
			if rs.At.Before(expires) {
				t.Fatalf("released at %v, before its expiry %v", rs.At, expires)
			}
			t.Logf("released %v after its expiry (TTL %v)", rs.At.Sub(expires), ttl)
			break
		}
		if now.After(deadline) {
			t.Fatalf("not released %v after its expiry", now.Sub(expires))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The hook sees reservations, commits and cancels as decisions, and the
// deny cache answers a reservation of one that it knows is rejected, and
// forgets what a give-back of this Limiter made stale.
func TestReservationsReachTheHookAndTheDenyCache(t *testing.T) {
	clk := newClock(epoch)
	var seen []ratelimit.Event
	_, l := limiter(t, redistest.Start(t), ratelimit.WithServerTimeForTests(clk.Now), ratelimit.WithDenyCache(8),
		ratelimit.WithHook(func(_ context.Context, e ratelimit.Event) { seen = append(seen, e) }))
	ctx := context.Background()
	lim := ratelimit.GCRA(3, time.Hour, 3)
	a := reserve(t, l, "k", lim, 3, time.Minute)
	for range 2 { // rejected, then answered from the cache
		if rs := reserve(t, l, "k", lim, 1, time.Minute); rs.Result.Allowed {
			t.Fatal("reserved past the limit")
		}
	}
	if _, err := a.Commit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	b := reserve(t, l, "k", lim, 1, time.Minute) // the cache forgot the rejection
	if _, err := b.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range seen {
		got = append(got, fmt.Sprintf("%s %s %d cached=%v", e.Op, e.Outcome, e.Granted, e.Cached))
	}
	want := []string{"reserve allowed 3 cached=false", "reserve rejected 0 cached=false", "reserve rejected 0 cached=true",
		"commit allowed 1 cached=false", "reserve allowed 1 cached=false", "cancel allowed 0 cached=false"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the hook saw\n %v\nwant\n %v", got, want)
	}
	if !b.Result.Allowed {
		t.Fatal("a reservation was refused after a commit gave two back")
	}
}

// The log names a member after the live count at its time. A give-back at
// the time of other members lowers that count; without moving the key's
// time past them, the next members were named as existing ones and
// overwrote them, so the log admitted past its limit (12 of 5 here).
func TestGiveBackAtTheSameInstantDoesNotLetTheLogOverwriteItsMembers(t *testing.T) {
	clk := newClock(epoch) // one instant throughout
	_, l := limiter(t, redistest.Start(t), ratelimit.WithServerTimeForTests(clk.Now))
	ctx := context.Background()
	lim := ratelimit.SlidingLog(5, time.Hour)
	admitted := 0
	if allow(t, l, "k", lim).Allowed {
		admitted++
	}
	rs := reserve(t, l, "k", lim, 2, time.Minute)
	if allow(t, l, "k", lim).Allowed {
		admitted++
	}
	if _, err := rs.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if allow(t, l, "k", lim).Allowed {
			admitted++
		}
	}
	if admitted != 5 {
		t.Fatalf("the log admitted %d under a limit of 5", admitted)
	}
}

// reservationPaths runs every path of reserve.lua and settle.lua on key
// under rule (of limits of 2 per window, spent): reserve, commit below and
// above, cancel, a retried settle, and a release by the TTL.
func reservationPaths(ctx context.Context, l *ratelimit.Limiter, key string, rule ratelimit.Rule, window time.Duration) error {
	if err := l.Reset(ctx, key, rule); err != nil {
		return err
	}
	a, err := l.Reserve(ctx, key, rule, 2, time.Minute)
	if err != nil || !a.Result.Allowed {
		return fmt.Errorf("reserve 2: %+v %v", a, err)
	}
	if err := a.Extend(ctx, time.Minute); err != nil {
		return fmt.Errorf("extend: %w", err)
	}
	if res, err := a.Commit(ctx, 1); err != nil || res.Granted != 1 {
		return fmt.Errorf("commit 1 of 2: %+v %v", res, err)
	}
	b, err := l.Reserve(ctx, key, rule, 1, time.Minute)
	if err != nil || !b.Result.Allowed {
		return fmt.Errorf("reserve the one given back: %+v %v", b, err)
	}
	if _, err := b.Cancel(ctx); err != nil {
		return fmt.Errorf("cancel: %w", err)
	}
	if _, err := b.Cancel(ctx); !errors.Is(err, ratelimit.ErrSettled) {
		return fmt.Errorf("cancel again: %v", err)
	}
	c, err := l.Reserve(ctx, key, rule, 1, time.Millisecond)
	if err != nil || !c.Result.Allowed {
		return fmt.Errorf("reserve for a ms: %+v %v", c, err)
	}
	// Until the TTL releases c, a reservation of 1 more is refused; then
	// it fits (the release gives back what the limits still count).
	for deadline := time.Now().Add(10 * window); ; {
		d, err := l.Reserve(ctx, key, rule, 1, time.Minute)
		if err != nil {
			return err
		}
		if d.Result.Allowed {
			if res, err := d.Commit(ctx, 2); err != nil || res.Granted < 1 {
				return fmt.Errorf("commit above the reservation: %+v %v", res, err)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("the expired reservation was never released")
		}
		time.Sleep(time.Millisecond)
	}
}
