package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/semaphore"
)

// The examples below need a Redis server, so they are compiled but not
// run; the tests run the same calls against real servers.

func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{
		Addr: "localhost:6379",
		// Let ctx deadlines bound every call, not only ReadTimeout.
		ContextTimeoutEnabled: true,
	})
	sem, err := semaphore.New(goredisadapter.New(rdb),
		semaphore.WithPrefix("billing:semaphore:"),
		semaphore.WithOwner("worker-7"),
	)
	if err != nil {
		log.Fatal(err)
	}
	_ = sem
}

func ExampleIssuer_Acquire() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	sem, _ := semaphore.New(goredisadapter.New(rdb))

	permit, err := sem.Acquire(ctx, "payment-provider", 10, 10*time.Second)
	var full *semaphore.FullError
	switch {
	case errors.As(err, &full):
		fmt.Printf("busy: %d calls in flight, the first ends within %v\n", full.Holders, full.Expires)
		return
	case err != nil:
		log.Fatal(err)
	}
	defer sem.Release(ctx, permit)
	fmt.Println("calling the provider with token", permit.Token)
}

func ExampleIssuer_AcquireWait() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	sem, _ := semaphore.New(goredisadapter.New(rdb))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Wakes when a holder releases, or when the earliest permit expires.
	permit, err := sem.AcquireWait(ctx, "exports:tenant-42", 5, time.Minute)
	if err != nil {
		log.Fatal(err) // matches context.DeadlineExceeded after 30s of waiting
	}
	defer sem.Release(context.Background(), permit)
}

func ExampleIssuer_Release() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	sem, _ := semaphore.New(goredisadapter.New(rdb))
	permit, err := sem.Acquire(ctx, "exports:tenant-42", 5, 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	// ... the work ...
	released, err := sem.Release(ctx, permit)
	if err != nil {
		log.Fatal(err)
	}
	if !released {
		// The permit expired before the release: for a while the work ran
		// unprotected by the semaphore, and only its token guarded it.
		log.Printf("permit %d had expired", permit.Token)
	}
}

func ExampleIssuer_Extend() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	sem, _ := semaphore.New(goredisadapter.New(rdb))
	permit, err := sem.Acquire(ctx, "exports:tenant-42", 5, 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer sem.Release(ctx, permit)
	// The export turned out larger: ask for another minute.
	if err := sem.Extend(ctx, permit, time.Minute); errors.Is(err, semaphore.ErrNotHeld) {
		log.Print("the permit expired; stop") // never brought back
	}
}

func ExampleIssuer_Holders() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	sem, _ := semaphore.New(goredisadapter.New(rdb))
	holders, err := sem.Holders(ctx, "exports:tenant-42")
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range holders {
		fmt.Printf("%s: token %d, %v left\n", h.Owner, h.Token, h.TTL)
	}
}

// A permit guards an item of work: fence what the permit's holder owns (the
// export, the job), so that a holder paused past its permit is refused once
// the item's next holder has written.
func ExampleIssuer_WithPermit() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	client := goredisadapter.New(rdb) // one adapter serves every primitive
	sem, _ := semaphore.New(client)
	store, _ := fence.New(client)

	err := sem.WithPermit(ctx, "exports:tenant-42", 5, 30*time.Second, func(ctx context.Context, p *semaphore.Permit) error {
		// ctx is cancelled the moment the permit can no longer be proven.
		return store.Set(ctx, p.Token, "export:981:status", "done")
	})
	var stale *fence.StaleError
	switch {
	case errors.Is(err, semaphore.ErrFull):
		log.Print("5 exports running; try later")
	case errors.As(err, &stale):
		log.Print("a newer holder of export 981 has written; this one stops")
	case err != nil:
		log.Print(err)
	}
}

// A Keeper renews a permit for as long as the work lasts, when the work is
// not one function call.
func ExampleIssuer_Keep() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	sem, _ := semaphore.New(goredisadapter.New(rdb))
	permit, err := sem.Acquire(ctx, "exports:tenant-42", 5, 30*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	keeper, err := sem.Keep(ctx, permit, 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	work := keeper.Context() // cancelled the moment the permit can no longer be proven
	runExport(work, "export-981", permit.Token)
	if err := keeper.Stop(); err != nil {
		log.Print(err) // ErrPermitLost: the export ran past its permit for a while
	}
	_, _ = sem.Release(ctx, permit)
}

func ExampleIssuer_Preflight() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	sem, _ := semaphore.New(goredisadapter.New(rdb))
	report, err := sem.Preflight(context.Background())
	if err != nil {
		log.Fatal(err) // INFO or CONFIG refused, or Redis unreachable
	}
	for _, p := range report.Problems {
		log.Print("semaphore: ", p) // an old server, a refused command, a counter that can be lost
	}
}

func ExampleWithHook() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	sem, err := semaphore.New(goredisadapter.New(rdb), semaphore.WithHook(func(_ context.Context, e semaphore.Event) {
		if e.Outcome == "full" {
			log.Printf("%s is full: %d live of %d", e.Name, e.Holders, e.Capacity)
		}
	}))
	if err != nil {
		log.Fatal(err)
	}
	_ = sem
}

func ExampleWithLogger() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	// Warns when a holder's work ran on past its permit: only its token
	// protected it then.
	sem, err := semaphore.New(goredisadapter.New(rdb), semaphore.WithLogger(slog.Default()))
	if err != nil {
		log.Fatal(err)
	}
	_ = sem
}

// The Deadline of a permit is the last moment its holder may act on it
// without an Extend: RequestedAt + TTL − margin.
func ExamplePermit_Deadline() {
	p := semaphore.Permit{RequestedAt: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), TTL: 10 * time.Second}
	fmt.Println(p.Deadline(100 * time.Millisecond).Format(time.TimeOnly + ".000"))
	// Output: 12:00:09.900
}

// A *FullError matches ErrFull and says how long until a place frees at
// the latest.
func ExampleFullError() {
	var err error = &semaphore.FullError{Name: "exports", Capacity: 5, Holders: 5, Expires: 1500 * time.Millisecond}
	var full *semaphore.FullError
	fmt.Println(errors.Is(err, semaphore.ErrFull), errors.As(err, &full) && full.Expires > time.Second)
	// Output: true true
}
