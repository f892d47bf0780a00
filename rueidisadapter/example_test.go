package rueidisadapter_test

import (
	"context"
	"log"
	"time"

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
	client := rueidisadapter.New(rc) // one value serves every primitive
	locker, err := lock.New(client)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := locker.Acquire(ctx, "invoice-42", 10*time.Second); err != nil {
		log.Print(err)
	}
}
