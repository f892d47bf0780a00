package lock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/lock"
)

// The examples below need a Redis server, so they are compiled but not run;
// the tests run the same calls against real servers.

func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{
		Addr: "localhost:6379",
		// Let ctx deadlines bound every call, not only ReadTimeout.
		ContextTimeoutEnabled: true,
	})
	locker, err := lock.New(goredisadapter.New(rdb),
		lock.WithPrefix("billing:lock:"),
		lock.WithOwner("worker-7"),
	)
	if err != nil {
		log.Fatal(err)
	}
	_ = locker
}

func ExampleLocker_Acquire() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	locker, _ := lock.New(goredisadapter.New(rdb))

	lease, err := locker.Acquire(ctx, "account-42", 10*time.Second)
	var held *lock.HeldError
	switch {
	case errors.As(err, &held):
		fmt.Printf("busy: token %d held by %s for another %v\n", held.Token, held.Owner, held.TTL)
		return
	case err != nil:
		log.Fatal(err)
	}
	defer locker.Release(ctx, lease)
	// Every write the lock protects carries lease.Token, and the resource
	// refuses a token lower than one it has seen (package fence).
	fmt.Println("charging account 42 with fencing token", lease.Token)
}

func ExampleLocker_AcquireWait() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	locker, _ := lock.New(goredisadapter.New(rdb))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Wakes when the holder releases, or when its lease expires.
	lease, err := locker.AcquireWait(ctx, "nightly-report", time.Minute)
	if err != nil {
		log.Fatal(err) // context.DeadlineExceeded after 30s of waiting
	}
	defer locker.Release(context.Background(), lease)
}

func ExampleLocker_Release() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	locker, _ := lock.New(goredisadapter.New(rdb))
	lease, err := locker.Acquire(ctx, "account-42", 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	// ... the work ...
	released, err := locker.Release(ctx, lease)
	if err != nil {
		log.Fatal(err)
	}
	if !released {
		// The lease expired during the work: another holder may have run at
		// the same time. Only the fencing token protected the writes.
		log.Printf("lease %d was lost before release", lease.Token)
	}
}

func ExampleLocker_Extend() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	locker, _ := lock.New(goredisadapter.New(rdb))
	lease, err := locker.Acquire(ctx, "import", 30*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Release(ctx, lease)
	for batch := 0; batch < 10; batch++ {
		// ... one batch ...
		if err := locker.Extend(ctx, lease, 30*time.Second); errors.Is(err, lock.ErrNotHeld) {
			log.Print("lost the lock; stopping")
			return
		}
	}
}

func ExampleLocker_Holder() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	locker, _ := lock.New(goredisadapter.New(rdb))
	h, err := locker.Holder(context.Background(), "account-42")
	if err != nil {
		log.Fatal(err)
	}
	if h.Held {
		fmt.Printf("held by %s with token %d for another %v\n", h.Owner, h.Token, h.TTL)
	}
}

func ExampleLocker_WithLock() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	locker, _ := lock.New(goredisadapter.New(rdb))
	err := locker.WithLock(context.Background(), "account-42", 10*time.Second,
		func(ctx context.Context, lease *lock.Lease) error {
			// Renewed every ~3.3s while this runs. ctx ends the moment the
			// lease cannot be proven; pass lease.Token with every write.
			return chargeAccount(ctx, 42, lease.Token)
		})
	switch {
	case errors.Is(err, lock.ErrHeld):
		log.Print("someone else is charging account 42")
	case errors.Is(err, lock.ErrLeaseLost):
		log.Printf("lease lost while charging: %v", err)
	case err != nil:
		log.Fatal(err)
	}
}

func ExampleLocker_Keep() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	locker, _ := lock.New(goredisadapter.New(rdb))
	lease, err := locker.Acquire(ctx, "scheduler", 9*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	keeper, err := locker.Keep(ctx, lease, 3*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	<-keeper.Context().Done() // run the term until the lease is lost (or Stop)
	log.Printf("term %d ended: %v", lease.Token, context.Cause(keeper.Context()))
	_ = keeper.Stop()
	_, _ = locker.Release(ctx, lease)
}

func ExampleLocker_Preflight() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	locker, _ := lock.New(goredisadapter.New(rdb))
	report, err := locker.Preflight(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range report.Problems {
		log.Printf("redis config: %s", p)
	}
}

func ExampleWithBatching() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	// The acquires, releases and renewals of many goroutines share round
	// trips, up to 64 script calls each; a name's calls keep their order.
	locker, err := lock.New(goredisadapter.New(rdb), lock.WithBatching(64))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	lease, err := locker.Acquire(ctx, "account-42", 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Release(ctx, lease)
}

func ExampleWithReplicas() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	// Acquire returns ErrNotReplicated, having released the lock, unless one
	// replica has it within 100ms.
	locker, err := lock.New(goredisadapter.New(rdb), lock.WithReplicas(1, 100*time.Millisecond, true))
	if err != nil {
		log.Fatal(err)
	}
	_, err = locker.Acquire(context.Background(), "account-42", 10*time.Second)
	if errors.Is(err, lock.ErrNotReplicated) {
		log.Print("no replica acknowledged; try later")
	}
}

func ExampleLease_Deadline() {
	sent := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	lease := lock.Lease{TTL: 10 * time.Second, RequestedAt: sent}
	// Trust the lease until 10s after the acquire was sent, minus a margin
	// for the drift between this clock and the server's.
	fmt.Println(lease.Deadline(200 * time.Millisecond).Format(time.TimeOnly + ".000"))
	// Output: 12:00:09.800
}

func ExampleHeldError() {
	err := error(&lock.HeldError{Name: "job", Token: 41, Owner: "node-a", TTL: 1500 * time.Millisecond})
	var held *lock.HeldError
	if errors.Is(err, lock.ErrHeld) && errors.As(err, &held) {
		fmt.Printf("retry in %v\n", held.TTL)
	}
	fmt.Println(err)
	// Output:
	// retry in 1.5s
	// lock: held by another owner: "job" (token 41, owner "node-a", expires in 1.5s)
}

// An operator clears a lock whose holder is stuck. The holder is not
// stopped: its token keeps its writes out once the next holder writes.
func ExampleLocker_ForceRelease() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	locker, err := lock.New(goredisadapter.New(rdb))
	if err != nil {
		log.Fatal(err)
	}
	deleted, err := locker.ForceRelease(context.Background(), "nightly-report")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("lock deleted:", deleted)
}

// Count contention and lost leases; a metrics adapter (module telemetry)
// plugs in the same way.
func ExampleWithHook() {
	var refused, lost atomic.Int64
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	locker, err := lock.New(goredisadapter.New(rdb),
		lock.WithHook(func(_ context.Context, e lock.Event) {
			switch {
			case e.Op == "acquire" && e.Outcome == "held":
				refused.Add(1)
			case e.Op == "lost":
				lost.Add(1)
			}
		}))
	if err != nil {
		log.Fatal(err)
	}
	_ = locker
}

// Log each lease lost while held, and each release that found its lease
// already lost, at level Warn; nothing else.
func ExampleWithLogger() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	locker, err := lock.New(goredisadapter.New(rdb),
		lock.WithLogger(slog.Default()))
	if err != nil {
		log.Fatal(err)
	}
	_ = locker
}

// A hook sees each decision with its facts.
func ExampleEvent() {
	hook := func(_ context.Context, e lock.Event) {
		switch e.Outcome {
		case "held":
			fmt.Printf("%s %q refused: held by %s (token %d) for %v\n", e.Op, e.Name, e.Holder.Owner, e.Holder.Token, e.Holder.TTL)
		case "not_held", "deadline":
			fmt.Printf("%s %q token %d: %s after %v held\n", e.Op, e.Name, e.Token, e.Outcome, e.HeldFor)
		default:
			fmt.Printf("%s %q: %s in %v\n", e.Op, e.Name, e.Outcome, e.Latency)
		}
	}
	ctx := context.Background()
	hook(ctx, lock.Event{Op: "acquire", Outcome: "acquired", Name: "job", Token: 7, Latency: 300 * time.Microsecond})
	hook(ctx, lock.Event{Op: "acquire", Outcome: "held", Name: "job",
		Holder: lock.Holder{Held: true, Token: 7, Owner: "node-a", TTL: 9 * time.Second}})
	hook(ctx, lock.Event{Op: "lost", Outcome: "deadline", Name: "job", Token: 7, HeldFor: 12 * time.Second})
	// Output:
	// acquire "job": acquired in 300µs
	// acquire "job" refused: held by node-a (token 7) for 9s
	// lost "job" token 7: deadline after 12s held
}
