package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/ratelimit"
)

// Examples that need a server only compile; they show the calls.

func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{
		Addr: "localhost:6379",
		// Lets context deadlines bound each call on the socket.
		ContextTimeoutEnabled: true,
	})
	limiter, err := ratelimit.New(goredisadapter.New(rdb), ratelimit.WithPrefix("myapp:rl:"))
	if err != nil {
		log.Fatal(err)
	}
	_ = limiter
}

func ExampleLimiter_Allow() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	res, err := limiter.Allow(context.Background(), "user:42", ratelimit.SlidingLog(100, time.Minute))
	if err != nil {
		log.Print(err) // Redis unreachable: fail open or closed, your choice
		return
	}
	if !res.Allowed {
		fmt.Printf("slow down: retry after %v\n", res.RetryAfter)
	}
}

func ExampleLimiter_AllowN() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	// A batch of 20 rows counts as 20 requests, all or none.
	res, err := limiter.AllowN(context.Background(), "tenant:7", ratelimit.GCRA(100, time.Second, 50), 20)
	if err == nil && res.Allowed {
		fmt.Println("import the batch")
	}
}

func ExampleLimiter_Take() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	// Send as many of 500 queued emails as the limit allows now.
	res, err := limiter.Take(context.Background(), "mailer", ratelimit.SlidingCounter(1000, time.Minute), 500)
	if err == nil {
		fmt.Printf("send %d now\n", res.Granted)
	}
}

func ExampleLimiter_Peek() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	res, err := limiter.Peek(context.Background(), "user:42", ratelimit.SlidingLog(100, time.Minute))
	if err == nil {
		fmt.Printf("%d left, full again in %v\n", res.Remaining, res.ResetAfter)
	}
}

func ExampleLimiter_Wait() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := limiter.Wait(ctx, "crawler:example.com", ratelimit.GCRA(2, time.Second, 1)); err != nil {
		log.Print(err) // errors.Is(err, context.DeadlineExceeded) when the wait is too long
		return
	}
	fmt.Println("fetch")
}

func ExampleWithServerTimeForTests() {
	// In a test only: place requests at exact instants.
	now := time.UnixMilli(1_750_000_000_000)
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb),
		ratelimit.WithServerTimeForTests(func() time.Time { return now }))
	_ = limiter
}

func ExamplePolicy() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	p := ratelimit.Policy{
		ratelimit.SlidingLog(10, time.Second).Named("burst"),
		ratelimit.SlidingCounter(1000, 24*time.Hour).Named("daily"),
	}
	res, err := limiter.Allow(context.Background(), "api-key:abc", p)
	if err == nil && !res.Allowed {
		fmt.Printf("limit %q bound; retry after %v\n", res.Limit.Name(), res.RetryAfter)
	}
}

func ExampleSlidingLog() {
	l := ratelimit.SlidingLog(100, time.Minute)
	fmt.Println(l, "|", l.Name(), "|", l.Burst())
	// Output: sliding-log 100/1m0s | 100-per-1m0s | 100
}

func ExampleSlidingCounter() {
	l := ratelimit.SlidingCounter(10_000, time.Hour).Named("hourly")
	fmt.Println(l, "|", l.Name())
	// Output: sliding-counter 10000/1h0m0s | hourly
}

func ExampleGCRA() {
	// 10 per second sustained, bursts of up to 20.
	l := ratelimit.GCRA(10, time.Second, 20)
	fmt.Println(l, "|", l.Algorithm(), l.N(), l.Window(), l.Burst())
	// Output: gcra 10/1s burst 20 | gcra 10 1s 20
}

func ExampleLimit_Named() {
	fmt.Println(ratelimit.SlidingLog(5, time.Second).Named("login").Name())
	// Output: login
}

// A policy that every call would refuse is caught at start-up.
func ExamplePolicy_Validate() {
	perSecond := ratelimit.SlidingLog(10, time.Second)
	fmt.Println(ratelimit.Policy{perSecond, ratelimit.SlidingCounter(1000, 24*time.Hour)}.Validate())
	fmt.Println(errors.Is(ratelimit.Policy{perSecond, perSecond}.Validate(), ratelimit.ErrInvalidLimit))
	// Output:
	// <nil>
	// true
}

func ExampleWithDenyCache() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	// Up to 10,000 rejected keys are answered in this process until their
	// RetryAfter: a key under attack costs Redis one call per RetryAfter.
	limiter, err := ratelimit.New(goredisadapter.New(rdb), ratelimit.WithDenyCache(10_000))
	if err != nil {
		log.Fatal(err)
	}
	res, err := limiter.Allow(context.Background(), "ip:203.0.113.7", ratelimit.GCRA(10, time.Second, 20))
	if err == nil && !res.Allowed {
		fmt.Printf("429, retry after %v\n", res.RetryAfter)
	}
}

func ExampleLimiter_Reset() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	// An operator lifts a user's block: the next call starts afresh.
	if err := limiter.Reset(context.Background(), "user:42", ratelimit.SlidingLog(100, time.Minute)); err != nil {
		log.Print(err)
	}
}

func ExampleLimiter_WaitN() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Send a batch of 20 messages within a 10/s, burst 50 budget.
	_, err := limiter.WaitN(ctx, "tenant:7", ratelimit.GCRA(10, time.Second, 50), 20)
	if errors.Is(err, ratelimit.ErrInvalidN) {
		log.Print("a batch larger than the burst can never be sent at once")
	}
}

// Count rejections by the limit that bound them; a metrics adapter (module
// telemetry) plugs in the same way.
func ExampleWithHook() {
	var mu sync.Mutex
	rejected := map[string]int{}
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, err := ratelimit.New(goredisadapter.New(rdb),
		ratelimit.WithHook(func(_ context.Context, e ratelimit.Event) {
			if e.Outcome == "rejected" {
				mu.Lock()
				rejected[e.Limit.Name()]++
				mu.Unlock()
			}
		}))
	if err != nil {
		log.Fatal(err)
	}
	_ = limiter
}

// Log each call that got no decision from Redis, at level Warn.
func ExampleWithLogger() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, err := ratelimit.New(goredisadapter.New(rdb),
		ratelimit.WithLogger(slog.Default()))
	if err != nil {
		log.Fatal(err)
	}
	_ = limiter
}

// A hook sees each decision with its outcome and the binding limit's name.
func ExampleEvent() {
	hook := func(_ context.Context, e ratelimit.Event) {
		switch e.Outcome {
		case "allowed":
			fmt.Printf("%s %s: allowed by %s, %d left\n", e.Op, e.Key, e.Limit.Name(), e.Remaining)
		case "rejected":
			fmt.Printf("%s %s: rejected by %s, retry after %v\n", e.Op, e.Key, e.Limit.Name(), e.RetryAfter)
		default: // error; expired or settled, for a Commit or Cancel
			fmt.Printf("%s %s: %s: %v\n", e.Op, e.Key, e.Outcome, e.Err)
		}
	}
	perMinute := ratelimit.SlidingLog(100, time.Minute).Named("per-minute")
	hook(context.Background(), ratelimit.Event{Op: "allow", Outcome: "allowed", Key: "user:42", Limit: perMinute, Granted: 1, Remaining: 99})
	hook(context.Background(), ratelimit.Event{Op: "allow", Outcome: "rejected", Key: "user:42", Limit: perMinute, RetryAfter: 1500 * time.Millisecond})
	hook(context.Background(), ratelimit.Event{Op: "commit", Outcome: "expired", Key: "user:42", Err: ratelimit.ErrExpired})
	// Output:
	// allow user:42: allowed by per-minute, 99 left
	// allow user:42: rejected by per-minute, retry after 1.5s
	// commit user:42: expired: ratelimit: reservation expired
}

// At start-up, check that the ACL user may run every command ratelimit
// needs on the Limiter's keys.
func ExampleLimiter_Preflight() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	limiter, err := ratelimit.New(goredisadapter.New(rdb), ratelimit.WithPrefix("app:rl:"))
	if err != nil {
		log.Fatal(err)
	}
	report, err := limiter.Preflight(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range report.Problems {
		log.Printf("redis %s: %s", report.Version, p)
	}
}

func ExampleLimiter_Reserve() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	ctx := context.Background()
	tokensPerMinute := ratelimit.GCRA(10_000, time.Minute, 10_000)
	// Reserve the most a completion may cost; settle what it did cost.
	rs, err := limiter.Reserve(ctx, "tenant:7", tokensPerMinute, 2_000, 30*time.Second)
	if err != nil {
		log.Print(err)
		return
	}
	if !rs.Result.Allowed {
		fmt.Printf("over budget: retry after %v\n", rs.Result.RetryAfter)
		return
	}
	used := 1_234 // the tokens the completion reported
	if _, err := rs.Commit(ctx, used); err != nil {
		log.Print(err) // retry Commit: it charges once; past the ttl, ErrExpired
	}
}

func ExampleReservation_Commit() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	ctx := context.Background()
	exportBytes := ratelimit.SlidingLog(1000, time.Hour) // in MB
	rs, err := limiter.Reserve(ctx, "export:acme", exportBytes, 100, 5*time.Minute)
	if err != nil || !rs.Result.Allowed {
		return
	}
	res, err := rs.Commit(ctx, 140) // above the reservation: the excess is charged as Take would
	if err == nil && !res.Allowed {
		fmt.Printf("only %d MB fitted under the limit\n", res.Granted)
	}
}

func ExampleReservation_Cancel() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	ctx := context.Background()
	rs, err := limiter.Reserve(ctx, "tenant:7", ratelimit.GCRA(100, time.Second, 50), 10, time.Second)
	if err != nil || !rs.Result.Allowed {
		return
	}
	if err := doWork(ctx); err != nil {
		// The work never ran: give the reservation back.
		if _, err := rs.Cancel(ctx); err != nil {
			log.Print(err) // the ttl gives it back anyway
		}
		return
	}
	_, _ = rs.Commit(ctx, 10)
}

func doWork(context.Context) error { return errors.New("upstream unavailable") }

func ExampleReservation() {
	// Input that can never be valid is refused before any round trip, so
	// this runs without a server.
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer rdb.Close()
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	ctx := context.Background()
	lim := ratelimit.GCRA(100, time.Second, 50)
	_, err := limiter.Reserve(ctx, "tenant:7", lim, 10, ratelimit.MaxReservationTTL+time.Second)
	fmt.Println(errors.Is(err, ratelimit.ErrInvalidTTL))
	_, err = limiter.Reserve(ctx, "tenant:7", lim, 51, time.Second) // above the burst
	fmt.Println(errors.Is(err, ratelimit.ErrInvalidN))
	// Output:
	// true
	// true
}

func ExampleReservation_Extend() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	ctx := context.Background()
	rs, err := limiter.Reserve(ctx, "export:acme", ratelimit.SlidingLog(1000, time.Hour), 100, time.Minute)
	if err != nil || !rs.Result.Allowed {
		return
	}
	// The export runs long: a minute more before the server releases it.
	if err := rs.Extend(ctx, time.Minute); err != nil {
		log.Print(err) // ErrExpired: it was released already; Commit will say so too
	}
	_, _ = rs.Commit(ctx, 80)
}

func ExampleReservation_Keep() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	ctx := context.Background()
	tokensPerMinute := ratelimit.GCRA(10_000, time.Minute, 10_000)
	rs, err := limiter.Reserve(ctx, "tenant:7", tokensPerMinute, 2_000, 30*time.Second)
	if err != nil || !rs.Result.Allowed {
		return
	}
	// A streaming completion of unknown length: extended every 10s, so it
	// is charged when it ends, however long it runs.
	keeper, err := rs.Keep(ctx, 10*time.Second)
	if err != nil {
		log.Print(err)
		return
	}
	used, err := stream(keeper.Context()) // ends early if the reservation is lost
	if lost := keeper.Stop(); lost != nil {
		log.Print(lost) // ErrExpired: the server released it; nothing is charged
		return
	}
	if err == nil {
		_, err = rs.Commit(ctx, used)
	}
	if err != nil {
		log.Print(err)
	}
}

// stream stands for work of unknown length, such as a streamed completion.
func stream(ctx context.Context) (int, error) { return 1_234, ctx.Err() }

func ExampleKeeper() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	ctx := context.Background()
	rs, err := limiter.Reserve(ctx, "export:acme", ratelimit.SlidingCounter(1000, time.Hour), 100, time.Minute)
	if err != nil || !rs.Result.Allowed {
		return
	}
	keeper, err := rs.Keep(ctx, 20*time.Second)
	if err != nil {
		return
	}
	select {
	case <-keeper.Context().Done(): // lost: stop the work
		fmt.Println(context.Cause(keeper.Context()))
	case <-time.After(time.Minute): // the work, done
	}
	if keeper.Stop() == nil {
		_, _ = rs.Commit(ctx, 90)
	}
}

func ExampleLimiter_ReserveWait() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, _ := ratelimit.New(goredisadapter.New(rdb))
	// Wait up to 2s for the budget, as x/time/rate's Wait does; a wait that
	// would pass the deadline is refused at once, saying when.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rs, err := limiter.ReserveWait(ctx, "tenant:7", ratelimit.GCRA(100, time.Second, 50), 10, 30*time.Second)
	if errors.Is(err, context.DeadlineExceeded) && rs != nil {
		fmt.Printf("over budget until %v from now\n", rs.Result.RetryAfter)
		return
	}
	if err != nil {
		log.Print(err)
		return
	}
	_, _ = rs.Commit(context.Background(), 7)
}
