package fence_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
)

// A lock holder writes with its lease's token and stops when refused.
func ExampleNew() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, err := fence.New(goredisadapter.New(rdb))
	if err != nil {
		log.Fatal(err)
	}
	var token int64 = 42 // lease.Token from package lock
	if err := store.Set(ctx, token, "account:7", "100"); errors.Is(err, fence.ErrStale) {
		log.Print("a newer holder has written; stopping")
	}
}

// One mark for every key of a job: the newer holder's first write, to any
// key, fences older holders out of all of them.
func ExampleWithScope() {
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	client := goredisadapter.New(rdb)
	store, err := fence.New(client, fence.WithScope("billing-run"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(store.Key("cursor"))
	fmt.Println(store.Key("totals"))
	// A prefix with the tag keeps the scope's keys and mark under app:,
	// which an ACL key pattern ~app:* grants.
	prefixed, err := fence.New(client, fence.WithScope("app:{billing-run}"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(prefixed.Key("cursor"))
	// Output:
	// {billing-run}:cursor
	// {billing-run}:totals
	// app:{billing-run}:cursor
}

func ExampleWithBatching() {
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	// The fenced writes of many goroutines share round trips, up to 64
	// each; each write keeps its own verdict, and the writes under one
	// mark keep their order.
	store, err := fence.New(goredisadapter.New(rdb), fence.WithBatching(64))
	if err != nil {
		log.Fatal(err)
	}
	if err := store.Set(context.Background(), 7, "report:42", "done"); err != nil {
		log.Print(err) // a *fence.StaleError when a newer holder wrote first
	}
}

func ExampleStore_Key() {
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	client := goredisadapter.New(rdb)
	perKey, _ := fence.New(client)
	scoped, _ := fence.New(client, fence.WithScope("job"))
	fmt.Println(perKey.Key("account:7"))
	fmt.Println(scoped.Key("account:7"))
	// Output:
	// account:7
	// {job}:account:7
}

func ExampleStore_Scope() {
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, _ := fence.New(goredisadapter.New(rdb), fence.WithScope("job"))
	fmt.Println(store.Scope())
	// Output: job
}

func ExampleStore_Set() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, _ := fence.New(goredisadapter.New(rdb))
	err := store.Set(ctx, 42, "account:7", "100")
	var stale *fence.StaleError
	if errors.As(err, &stale) {
		log.Printf("refused: token %d, highest accepted %d", stale.Token, stale.Highest)
	}
}

func ExampleStore_HSet() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, _ := fence.New(goredisadapter.New(rdb))
	if err := store.HSet(ctx, 42, "account:7:meta", "owner", "alice"); err != nil {
		log.Print(err)
	}
}

// A fenced ZADD and a log entry in one atomic call. KEYS[1] and ARGV[1]
// are the fence's; the caller's keys and arguments start at 2.
func ExampleStore_Eval() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, _ := fence.New(goredisadapter.New(rdb))
	n, err := store.Eval(ctx, 42, `
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
redis.call('RPUSH', KEYS[3], ARGV[3])
return redis.call('ZCARD', KEYS[2])`,
		[]string{"{board}:scores", "{board}:log"}, 10, "alice")
	if err != nil {
		log.Print(err)
		return
	}
	log.Printf("board has %d entries", n)
}

func ExampleStore_Get() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, _ := fence.New(goredisadapter.New(rdb))
	v, err := store.Get(ctx, "account:7")
	if errors.Is(err, fence.ErrNotFound) {
		log.Print("never written")
	}
	log.Print(v)
}

func ExampleStore_HGet() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, _ := fence.New(goredisadapter.New(rdb))
	owner, err := store.HGet(ctx, "account:7:meta", "owner")
	if err != nil {
		log.Print(err)
	}
	log.Print(owner)
}

func ExampleStore_Highest() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, _ := fence.New(goredisadapter.New(rdb))
	n, err := store.Highest(ctx, "account:7")
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("highest token accepted for account:7: %d", n)
}

// The holder passes one value to the code that writes for it.
func ExampleStore_Fencer() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, _ := fence.New(goredisadapter.New(rdb), fence.WithScope("billing-run"))
	f := store.Fencer(42) // lease.Token from package lock

	saveProgress := func(ctx context.Context, f fence.Fencer, n int) error {
		return f.Set(ctx, f.Key("cursor"), n)
	}
	if err := saveProgress(ctx, f, 1000); errors.Is(err, fence.ErrStale) {
		log.Print("superseded; stopping")
	}
}

func ExampleFencer_Token() {
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, _ := fence.New(goredisadapter.New(rdb))
	f := store.Fencer(42)
	fmt.Println(f.Token()) // for a resource that is not Redis, such as pgfence
	// Output: 42
}

func ExampleFencer_Key() {
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, _ := fence.New(goredisadapter.New(rdb), fence.WithScope("job"))
	fmt.Println(store.Fencer(42).Key("cursor"))
	// Output: {job}:cursor
}

func ExampleFencer_Set() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, _ := fence.New(goredisadapter.New(rdb))
	if err := store.Fencer(42).Set(ctx, "account:7", "100"); err != nil {
		log.Print(err)
	}
}

func ExampleFencer_HSet() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, _ := fence.New(goredisadapter.New(rdb))
	if err := store.Fencer(42).HSet(ctx, "account:7:meta", "owner", "alice"); err != nil {
		log.Print(err)
	}
}

func ExampleFencer_Eval() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, _ := fence.New(goredisadapter.New(rdb))
	_, err := store.Fencer(42).Eval(ctx, "redis.call('XADD', KEYS[2], '*', 'event', ARGV[2])",
		[]string{"{orders}:events"}, "shipped")
	if err != nil {
		log.Print(err)
	}
}

func ExampleStaleError() {
	var err error = &fence.StaleError{Key: "account:7", Token: 3, Highest: 5}
	fmt.Println(errors.Is(err, fence.ErrStale))
	fmt.Println(err)
	// Output:
	// true
	// fence: token lower than the highest accepted: "account:7": token 3, highest accepted 5
}

// Count refused stale writes: the event that shows fencing at work.
func ExampleWithHook() {
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	var refused atomic.Int64
	store, err := fence.New(goredisadapter.New(rdb), fence.WithHook(func(_ context.Context, e fence.Event) {
		if e.Outcome == "stale" {
			refused.Add(1)
		}
	}))
	if err != nil {
		log.Fatal(err)
	}
	_ = store
}

// Log each refused stale write (and nothing else) at level Warn.
func ExampleWithLogger() {
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, err := fence.New(goredisadapter.New(rdb), fence.WithLogger(slog.Default()))
	if err != nil {
		log.Fatal(err)
	}
	_ = store
}

// At start-up, check that the server keeps the marks and that the ACL user
// may run every command fence needs on keys like the application's.
func ExampleStore_Preflight() {
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, err := fence.New(goredisadapter.New(rdb))
	if err != nil {
		log.Fatal(err)
	}
	report, err := store.Preflight(context.Background(), "app:account:7")
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range report.Problems {
		log.Printf("redis %s: %s", report.Version, p)
	}
}

// An Event reports every write: its verdict, its latency and its error.
func ExampleEvent() {
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	store, err := fence.New(goredisadapter.New(rdb), fence.WithHook(func(ctx context.Context, e fence.Event) {
		switch e.Outcome {
		case "stale":
			log.Printf("%s %s: token %d refused, highest %d", e.Op, e.Key, e.Token, e.Highest)
		case "error":
			log.Printf("%s %s: %v after %v", e.Op, e.Key, e.Err, e.Latency)
		}
	}))
	if err != nil {
		log.Fatal(err)
	}
	_ = store
}
