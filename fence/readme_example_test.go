package fence_test

import (
	"context"
	"errors"
	"log"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
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

func TestTheReadmesFenceSnippetReturnsAStaleHoldersRefusalAndKeepsTheNewerValue(t *testing.T) {
	s := redistest.Start(t, redistest.Own()) // the snippet's key has no test prefix
	rdb := s.Client(t)
	ctx := context.Background()
	if err := writeBalance(ctx, rdb, 2); err != nil {
		t.Fatalf("the newer holder's write: %v", err)
	}
	err := writeBalance(ctx, rdb, 1)
	var stale *fence.StaleError
	if !errors.As(err, &stale) || stale.Token != 1 || stale.Highest != 2 {
		t.Fatalf("the older holder's write returned %v, want a *StaleError (token 1, highest 2)", err)
	}
	if err := writeBalance(ctx, rdb, 2); err != nil {
		t.Fatalf("the current holder writing again: %v", err)
	}
	if err := rdb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := writeBalance(ctx, rdb, 3); err == nil || errors.As(err, &stale) {
		t.Fatalf("a write on a closed client returned %v, want its error", err)
	}
}
