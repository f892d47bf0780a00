package election_test

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/goredisadapter"
)

// The README's election quickstart is this function's body, word for word
// (examples/snippets_test.go checks it).
func Example_quickstart() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	hostname, _ := os.Hostname()
	e, err := election.New(goredisadapter.New(rdb), election.Config{Name: "scheduler", NodeID: hostname})
	if err != nil {
		log.Fatal(err)
	}
	err = e.Run(ctx, func(ctx context.Context, term election.Term) error {
		// Lead until ctx is cancelled: returning from fn ends the term.
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
			// Every side effect carries the epoch. On fence.ErrStale a newer
			// leader has written: the term is over, and Run contends again.
			if err := term.Fencer.Set(ctx, "schedule", nextRun()); err != nil {
				return err
			}
		}
	})
	log.Print(err) // ctx ended, or an error retrying cannot fix (an ACL refusal, a Redis too old)
}

func nextRun() string { return time.Now().Add(time.Minute).Format(time.RFC3339) }
