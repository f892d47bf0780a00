package ratelimittest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/ratelimittest"
)

// A test decides with the double where the code under test has a
// ratelimit.Limiter, and moves its Clock instead of sleeping.
func Example() {
	clock := ratelimittest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	limiter, err := ratelimittest.New(ratelimittest.WithClock(clock))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	lim := ratelimit.SlidingLog(2, time.Minute)
	for range 3 {
		res, _ := limiter.Allow(ctx, "user:42", lim)
		fmt.Println(res.Allowed, res.Remaining, res.RetryAfter)
	}
	clock.Advance(time.Minute)
	res, _ := limiter.Allow(ctx, "user:42", lim)
	fmt.Println(res.Allowed, res.Remaining)
	// Output:
	// true 1 0s
	// true 0 0s
	// false 0 1m0s
	// true 1
}

func ExampleNew() {
	limiter, err := ratelimittest.New() // on the process's clock
	if err != nil {
		log.Fatal(err)
	}
	res, err := limiter.Allow(context.Background(), "k", ratelimit.GCRA(10, time.Second, 5))
	fmt.Println(res.Allowed, res.Remaining, err)
	// Output: true 4 <nil>
}

func ExampleWithClock() {
	clock := ratelimittest.NewClock(time.Unix(1_700_000_000, 0))
	limiter, err := ratelimittest.New(ratelimittest.WithClock(clock))
	if err != nil {
		log.Fatal(err)
	}
	_, err = ratelimittest.New(ratelimittest.WithClock(nil))
	fmt.Println(limiter != nil, errors.Is(err, ratelimit.ErrInvalidOption))
	// Output: true true
}

func ExampleOption() {
	opts := []ratelimittest.Option{ratelimittest.WithClock(ratelimittest.NewClock(time.Unix(0, 0))), nil}
	_, err := ratelimittest.New(opts...)
	fmt.Println(err)
	// Output: ratelimit: invalid option: option 1 is nil
}

func ExampleNewClock() {
	clock := ratelimittest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println(clock.Now())
	// Output: 2026-01-01 00:00:00 +0000 UTC
}

func ExampleClock() {
	// One Clock for a Redis Limiter (pinned to it) and the double, so both
	// see the same instants:
	//
	//	ratelimit.New(goredisadapter.New(rdb), ratelimit.WithServerTimeForTests(clock.Now))
	//	ratelimittest.New(ratelimittest.WithClock(clock))
	clock := ratelimittest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var now func() time.Time = clock.Now
	clock.Advance(time.Second)
	fmt.Println(now().Format(time.TimeOnly))
	// Output: 00:00:01
}

func ExampleClock_Now() {
	clock := ratelimittest.NewClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	fmt.Println(clock.Now().Format(time.Kitchen))
	// Output: 12:00PM
}

func ExampleClock_Advance() {
	clock := ratelimittest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	limiter, _ := ratelimittest.New(ratelimittest.WithClock(clock))
	ctx := context.Background()
	lim := ratelimit.GCRA(1, time.Second, 1)
	first, _ := limiter.Allow(ctx, "k", lim)
	second, _ := limiter.Allow(ctx, "k", lim)
	clock.Advance(second.RetryAfter)
	third, _ := limiter.Allow(ctx, "k", lim)
	fmt.Println(first.Allowed, second.Allowed, second.RetryAfter, third.Allowed)
	// Output: true false 1s true
}

func ExampleClock_Set() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := ratelimittest.NewClock(start)
	limiter, _ := ratelimittest.New(ratelimittest.WithClock(clock))
	ctx := context.Background()
	lim := ratelimit.SlidingLog(1, time.Minute)
	_, _ = limiter.Allow(ctx, "k", lim)
	clock.Set(start.Add(-time.Hour)) // stepped back: the key keeps its latest time
	res, _ := limiter.Allow(ctx, "k", lim)
	fmt.Println(res.Allowed, res.RetryAfter)
	// Output: false 1m0s
}

func ExampleLimiter_Allow() {
	limiter, _ := ratelimittest.New(ratelimittest.WithClock(ratelimittest.NewClock(time.Unix(0, 0))))
	policy := ratelimit.Policy{ratelimit.SlidingLog(3, time.Second).Named("second"), ratelimit.SlidingLog(5, time.Hour).Named("hour")}
	res, _ := limiter.Allow(context.Background(), "k", policy)
	fmt.Println(res.Allowed, res.Limit.Name(), res.Remaining)
	// Output: true second 2
}

func ExampleLimiter_AllowN() {
	limiter, _ := ratelimittest.New(ratelimittest.WithClock(ratelimittest.NewClock(time.Unix(0, 0))))
	ctx := context.Background()
	lim := ratelimit.SlidingCounter(10, time.Minute)
	a, _ := limiter.AllowN(ctx, "k", lim, 8)
	b, _ := limiter.AllowN(ctx, "k", lim, 3) // all or none: none
	_, err := limiter.AllowN(ctx, "k", lim, 11)
	fmt.Println(a.Allowed, a.Remaining, b.Allowed, b.Remaining, errors.Is(err, ratelimit.ErrInvalidN))
	// Output: true 2 false 2 true
}

func ExampleLimiter_Take() {
	limiter, _ := ratelimittest.New(ratelimittest.WithClock(ratelimittest.NewClock(time.Unix(0, 0))))
	ctx := context.Background()
	lim := ratelimit.GCRA(1, time.Second, 5)
	a, _ := limiter.Take(ctx, "k", lim, 3)
	b, _ := limiter.Take(ctx, "k", lim, 3) // as many as there are
	fmt.Println(a.Granted, b.Granted, b.Remaining)
	// Output: 3 2 0
}

func ExampleLimiter_Peek() {
	limiter, _ := ratelimittest.New(ratelimittest.WithClock(ratelimittest.NewClock(time.Unix(0, 0))))
	ctx := context.Background()
	lim := ratelimit.SlidingLog(2, time.Minute)
	_, _ = limiter.Allow(ctx, "k", lim)
	p, _ := limiter.Peek(ctx, "k", lim)
	q, _ := limiter.Peek(ctx, "k", lim) // consumes nothing
	fmt.Println(p.Allowed, p.Remaining, q.Remaining)
	// Output: true 1 1
}

func ExampleLimiter_Reset() {
	limiter, _ := ratelimittest.New(ratelimittest.WithClock(ratelimittest.NewClock(time.Unix(0, 0))))
	ctx := context.Background()
	lim := ratelimit.SlidingLog(1, time.Hour)
	_, _ = limiter.Allow(ctx, "k", lim)
	before, _ := limiter.Peek(ctx, "k", lim)
	_ = limiter.Reset(ctx, "k", lim)
	after, _ := limiter.Peek(ctx, "k", lim)
	fmt.Println(before.Allowed, after.Allowed)
	// Output: false true
}

func ExampleLimiter_Wait() {
	clock := ratelimittest.NewClock(time.Unix(0, 0))
	limiter, _ := ratelimittest.New(ratelimittest.WithClock(clock))
	ctx := context.Background()
	lim := ratelimit.GCRA(1, time.Minute, 1)
	_, _ = limiter.Allow(ctx, "k", lim)
	done := make(chan ratelimit.Result)
	go func() {
		res, _ := limiter.Wait(ctx, "k", lim) // waits on the Clock
		done <- res
	}()
	time.Sleep(10 * time.Millisecond) // let Wait start (had it not, it would be admitted at once)
	clock.Advance(time.Minute)
	res := <-done
	fmt.Println(res.Allowed, clock.Now().Sub(time.Unix(0, 0)))
	// Output: true 1m0s
}

func ExampleLimiter_WaitN() {
	limiter, _ := ratelimittest.New(ratelimittest.WithClock(ratelimittest.NewClock(time.Unix(0, 0))))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	lim := ratelimit.GCRA(1, time.Minute, 3)
	a, _ := limiter.WaitN(ctx, "k", lim, 3)
	_, err := limiter.WaitN(ctx, "k", lim, 3) // 3 minutes away: past the deadline
	fmt.Println(a.Granted, errors.Is(err, context.DeadlineExceeded))
	// Output: 3 true
}

// Code that reserves is tested on the double: the same Results and errors
// as on Redis, on a Clock the test moves.
func ExampleLimiter_Reserve() {
	clock := ratelimittest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	limiter, _ := ratelimittest.New(ratelimittest.WithClock(clock))
	ctx := context.Background()
	tokensPerMinute := ratelimit.SlidingCounter(10_000, time.Minute)
	rs, _ := limiter.Reserve(ctx, "tenant:7", tokensPerMinute, 8_000, 30*time.Second)
	over, _ := limiter.Reserve(ctx, "tenant:7", tokensPerMinute, 3_000, 30*time.Second)
	fmt.Println(rs.Result.Allowed, rs.Result.Remaining, over.Result.Allowed)
	// Output: true 2000 false
}

func ExampleReservation_Commit() {
	clock := ratelimittest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	limiter, _ := ratelimittest.New(ratelimittest.WithClock(clock))
	ctx := context.Background()
	lim := ratelimit.SlidingLog(10, time.Hour)
	rs, _ := limiter.Reserve(ctx, "k", lim, 6, time.Minute)
	res, _ := rs.Commit(ctx, 4) // 2 given back
	_, err := rs.Commit(ctx, 4)
	fmt.Println(res.Granted, res.Remaining, errors.Is(err, ratelimit.ErrSettled))
	// Output: 4 6 true
}

func ExampleReservation_Cancel() {
	clock := ratelimittest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	limiter, _ := ratelimittest.New(ratelimittest.WithClock(clock))
	ctx := context.Background()
	lim := ratelimit.SlidingCounter(10, time.Hour)
	rs, _ := limiter.Reserve(ctx, "k", lim, 6, time.Minute)
	res, _ := rs.Cancel(ctx)
	fmt.Println(res.Remaining)
	// Output: 10
}

func ExampleReservation_Extend() {
	clock := ratelimittest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	limiter, _ := ratelimittest.New(ratelimittest.WithClock(clock))
	ctx := context.Background()
	lim := ratelimit.GCRA(10, time.Hour, 10)
	kept, _ := limiter.Reserve(ctx, "a", lim, 3, time.Minute)
	left, _ := limiter.Reserve(ctx, "b", lim, 3, time.Minute)
	_ = kept.Extend(ctx, time.Minute)
	clock.Advance(90 * time.Second) // past the first expiry
	_, errKept := kept.Commit(ctx, 3)
	_, errLeft := left.Commit(ctx, 3)
	fmt.Println(errKept, errors.Is(errLeft, ratelimit.ErrExpired))
	// Output: <nil> true
}
