package fence_test

import (
	"context"
	"errors"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
)

// writeBalance is the README's fence quickstart, word for word
// (examples/snippets_test.go checks it).
func writeBalance(ctx context.Context, rdb *redis.Client, token int64) error {
	store, err := fence.New(goredisadapter.New(rdb))
	if err != nil {
		return err
	}
	err = store.Set(ctx, token, "balance:42", "100")
	var stale *fence.StaleError
	if errors.As(err, &stale) {
		log.Printf("lease over: token %d < %d, a newer holder has written; stop", stale.Token, stale.Highest)
	}
	return err
}

var _ = writeBalance
