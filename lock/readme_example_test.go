package lock_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/lock"
)

// The README's lock quickstart is this function's body, word for word
// (examples/snippets_test.go checks it).
func Example_quickstart() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	locker, err := lock.New(goredisadapter.New(rdb))
	if err != nil {
		log.Fatal(err) // a nil client or a bad option
	}
	lease, err := locker.Acquire(ctx, "account-42", 10*time.Second)
	if errors.Is(err, lock.ErrHeld) {
		return // someone else has it; *lock.HeldError says who and for how long
	}
	if err != nil {
		log.Print(err) // Redis unreachable or ctx done: there is no lease
		return
	}
	defer locker.Release(ctx, lease)    // compare-and-delete: never deletes the next holder's lock
	chargeAccount(ctx, 42, lease.Token) // the token travels with every write
}
