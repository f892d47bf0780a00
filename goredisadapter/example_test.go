package goredisadapter_test

import (
	"context"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/lock"
)

// The example needs a Redis server, so it is compiled but not run; the
// tests run the same calls against real servers.

func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	client := goredisadapter.New(rdb) // one for every primitive on rdb
	locker, err := lock.New(client, lock.WithPrefix("billing:lock:"))
	if err != nil {
		log.Fatal(err)
	}
	lease, err := locker.Acquire(context.Background(), "invoice-42", 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Release(context.Background(), lease)
}
