package rueidisadapter_test

import (
	"context"
	"log"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/rueidisadapter"
)

// The example needs a Redis server, so it is compiled but not run; the
// tests run the same calls against real servers.

func ExampleNew() {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"localhost:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()
	client, err := rueidisadapter.New(rc)
	if err != nil {
		log.Fatal(err)
	}
	locker, err := lock.New(client, lock.WithPrefix("billing:lock:"))
	if err != nil {
		log.Fatal(err)
	}
	lease, err := locker.Acquire(context.Background(), "invoice-42", 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	_ = lease
}

func ExampleAddHook() {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"localhost:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()
	client, err := rueidisadapter.New(rc)
	if err != nil {
		log.Fatal(err)
	}
	// Not client.AddHook: go-redis would run the hook after the adapter's,
	// which ends the chain.
	var hook redis.Hook // a tracing or metrics hook, say
	if err := rueidisadapter.AddHook(client, hook); err != nil {
		log.Fatal(err)
	}
}
