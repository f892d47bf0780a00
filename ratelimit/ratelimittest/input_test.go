package ratelimittest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// wrapped is a Rule that is neither a Limit nor a Policy.
type wrapped struct{ ratelimit.Limit }

// Every input the Redis Limiter refuses, the double refuses with the same
// error, word for word, on every operation; and a call on a context that
// has ended fails the same way on both.
func TestDoubleRefusesWhatTheRedisLimiterRefusesWithTheSameError(t *testing.T) {
	p := newPair(t, redistest.Start(t), "input:")
	ok := ratelimit.GCRA(1, time.Second, 2)
	cases := []struct {
		name string
		call call
	}{
		{"empty key", call{"", "", ok, 1}},
		{"nil rule", call{"", "k", nil, 1}},
		{"nil policy", call{"", "k", ratelimit.Policy(nil), 1}},
		{"empty policy", call{"", "k", ratelimit.Policy{}, 1}},
		{"zero limit", call{"", "k", ratelimit.Limit{}, 1}},
		{"neither limit nor policy", call{"", "k", wrapped{ok}, 1}},
		{"n of 0", call{"", "k", ok, 0}},
		{"n of -1", call{"", "k", ok, -1}},
		{"n beyond the burst", call{"", "k", ok, 3}},
		{"n beyond a policy's second limit", call{"", "k", ratelimit.Policy{ratelimit.SlidingLog(5, time.Second), ok}, 3}},
		{"no requests", call{"", "k", ratelimit.SlidingLog(0, time.Second), 1}},
		{"window under 1ms", call{"", "k", ratelimit.SlidingCounter(5, 999*time.Microsecond), 1}},
		{"burst of 0", call{"", "k", ratelimit.GCRA(1, time.Second, 0), 1}},
		{"gcra past 2^53", call{"", "k", ratelimit.GCRA(1, 24*time.Hour, 1<<30), 1}},
		{"log past 2^53", call{"", "k", ratelimit.SlidingLog(1<<30, 24*time.Hour), 1}},
		{"counter past 2^52", call{"", "k", ratelimit.SlidingCounter(1<<52, time.Second), 1}},
		{"window past ten years", call{"", "k", ratelimit.SlidingCounter(1, ratelimit.MaxWindow+time.Millisecond), 1}},
		{"more than a call may charge a log", call{"", "k", ratelimit.SlidingLog(1_000_000, time.Second), ratelimit.MaxLogCharge + 1}},
		{"more than a call may charge a policy's log", call{"", "k", ratelimit.Policy{ratelimit.GCRA(1_000_000, time.Second, 1_000_000), ratelimit.SlidingLog(1_000_000, time.Second)}, ratelimit.MaxLogCharge + 1}},
		{"a limit twice", call{"", "k", ratelimit.Policy{ok, ratelimit.SlidingLog(3, time.Second), ok.Named("again")}, 1}},
		{"the first limit's n before the second's validity", call{"", "k", ratelimit.Policy{ok, ratelimit.SlidingLog(0, time.Second)}, 3}},
		{"the first limit's validity before n", call{"", "k", ratelimit.Policy{ratelimit.SlidingLog(0, time.Second), ok}, 3}},
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	ctxs := map[string]context.Context{"live": context.Background(), "canceled": canceled, "expired": expired}
	sentinels := []error{ratelimit.ErrInvalidKey, ratelimit.ErrInvalidLimit, ratelimit.ErrInvalidN, context.Canceled, context.DeadlineExceeded}
	compared := 0
	for _, c := range cases {
		refused := 0
		for cname, ctx := range ctxs {
			for _, op := range []string{"allow", "allowN", "take", "peek", "wait", "waitN", "reset"} {
				c.call.op = op
				want, werr := c.call.do(ctx, p.redis)
				got, gerr := c.call.do(ctx, p.double)
				if werr == nil && gerr == nil && cname == "live" && c.call.n != 1 && op != "allowN" && op != "take" && op != "waitN" {
					continue // an operation that takes no n
				}
				refused++
				if werr == nil || gerr == nil || werr.Error() != gerr.Error() || fmt.Sprint(want) != fmt.Sprint(got) {
					t.Fatalf("%s, %s context, %s:\n redis  %v, %+v\n double %v, %+v", c.name, cname, op, werr, want, gerr, got)
				}
				for _, s := range sentinels {
					if errors.Is(werr, s) != errors.Is(gerr, s) {
						t.Fatalf("%s, %s context, %s: errors.Is(err, %v) is %v for redis, %v for the double", c.name, cname, op, s, errors.Is(werr, s), errors.Is(gerr, s))
					}
				}
				compared++
			}
		}
		if refused < 3*3 {
			t.Fatalf("%s: refused by %d calls, want every operation that takes it on 3 contexts", c.name, refused)
		}
	}
	// And on valid input, an ended context alone.
	for cname, ctx := range map[string]context.Context{"canceled": canceled, "expired": expired} {
		for _, op := range []string{"allow", "allowN", "take", "peek", "wait", "waitN", "reset"} {
			c := call{op, "k", ok, 1}
			_, werr := c.do(ctx, p.redis)
			_, gerr := c.do(ctx, p.double)
			if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
				t.Fatalf("valid input, %s context, %s:\n redis  %v\n double %v", cname, op, werr, gerr)
			}
			compared++
		}
	}
	t.Logf("%d refusals compared", compared)
}

// A Commit of more than one call may charge a log is refused by both, with
// the same error, and leaves both reservations outstanding.
func TestDoubleRefusesACommitOfMoreThanACallMayChargeALogAsTheRedisLimiterDoes(t *testing.T) {
	p := newPair(t, redistest.Start(t), "commit:")
	ctx := context.Background()
	log := ratelimit.SlidingLog(1_000_000, time.Second)
	rr, err := p.redis.Reserve(ctx, "k", log, 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	dr, err := p.double.Reserve(ctx, "k", log, 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, werr := rr.Commit(ctx, ratelimit.MaxLogCharge+1)
	_, gerr := dr.Commit(ctx, ratelimit.MaxLogCharge+1)
	if !errors.Is(werr, ratelimit.ErrInvalidN) || gerr == nil || werr.Error() != gerr.Error() {
		t.Fatalf("commit past the log's charge:\n redis  %v\n double %v", werr, gerr)
	}
	if _, err := rr.Commit(ctx, 1); err != nil {
		t.Fatalf("redis: the reservation after the refused commit: %v", err)
	}
	if _, err := dr.Commit(ctx, 1); err != nil {
		t.Fatalf("double: the reservation after the refused commit: %v", err)
	}
}
