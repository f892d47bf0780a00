package semaphore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// The price of one fence across a whole semaphore: tokens are admitted in
// increasing order, so the older of two live holders is refused as soon as
// the newer one has written the shared key, although its permit is live.
func TestOneFenceSharedByLiveHoldersRefusesTheOlder(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	i := newIssuer(t, s)
	fences, err := fence.New(goredisadapter.New(s.Client(t)))
	if err != nil {
		t.Fatal(err)
	}
	older := mustAcquire(t, i, "workers", 2, time.Minute)
	newer := mustAcquire(t, i, "workers", 2, time.Minute)
	shared := s.Prefix() + "report"
	if err := fences.Set(ctx, newer.Token, shared, "newer"); err != nil {
		t.Fatal(err)
	}
	err = fences.Set(ctx, older.Token, shared, "older")
	var stale *fence.StaleError
	if !errors.As(err, &stale) {
		t.Fatalf("the older live holder's write to the shared fence: %v, want refused", err)
	}
	if err := i.Extend(ctx, older, time.Minute); err != nil {
		t.Fatalf("the refused holder's permit is not live: %v", err)
	}
	t.Logf("two live permits: token %d refused on the key token %d wrote (%v)", older.Token, newer.Token, stale)
}
