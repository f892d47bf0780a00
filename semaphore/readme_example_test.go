package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
)

// export is the README's semaphore quickstart, word for word
// (examples/snippets_test.go checks it).
func export(ctx context.Context, rdb *redis.Client, tenant, exportID string) error {
	sem, err := semaphore.New(goredisadapter.New(rdb))
	if err != nil {
		return err // a nil client or a bad option
	}
	// At most 5 exports of a tenant at a time, each permit a 30s lease.
	permit, err := sem.Acquire(ctx, "exports:"+tenant, 5, 30*time.Second)
	if errors.Is(err, semaphore.ErrFull) {
		// 5 are running; the *semaphore.FullError in err says when the first expires.
		return fmt.Errorf("tenant %s has 5 exports running: %w", tenant, err)
	}
	if err != nil {
		return err // Redis unreachable or ctx done: there is no permit
	}
	defer sem.Release(ctx, permit)                // gives the place back; a crash gives it back at the TTL
	return runExport(ctx, exportID, permit.Token) // the token travels with every write to this export
}

// exported records the tokens runExport was called with, per export, for
// the tests of the snippets that call it.
var exported = struct {
	sync.Mutex
	tokens map[string][]int64
}{tokens: map[string][]int64{}}

func runExport(ctx context.Context, id string, token int64) error {
	exported.Lock()
	exported.tokens[id] = append(exported.tokens[id], token)
	exported.Unlock()
	return ctx.Err()
}

func exportsOf(id string) []int64 {
	exported.Lock()
	defer exported.Unlock()
	return append([]int64(nil), exported.tokens[id]...)
}

// Each branch of the README's quickstart: the export run with its permit's
// token and the place given back after it; a tenant with 5 exports running
// refused with ErrFull and its FullError in the chain, nothing run; an
// error (a closed client, a nil one) returned with nothing run.
func TestTheReadmesSemaphoreSnippetRunsWithItsTokenRefusesAFullTenantAndReturnsErrors(t *testing.T) {
	s := redistest.Start(t, redistest.Own()) // the snippet's names have no test prefix
	rdb := s.Client(t)
	ctx := context.Background()
	sem, err := semaphore.New(goredisadapter.New(rdb))
	if err != nil {
		t.Fatal(err)
	}

	if err := export(ctx, rdb, "tenant-1", "export-1"); err != nil {
		t.Fatalf("an export of a tenant with none running: %v", err)
	}
	if got := exportsOf("export-1"); len(got) != 1 || got[0] <= 0 {
		t.Fatalf("runs of the export: %v, want one, with a positive token", got)
	}
	holders, err := sem.Holders(ctx, "exports:tenant-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(holders) != 0 {
		t.Fatalf("%d permits live after the snippet returned, want its place given back", len(holders))
	}

	for range 5 {
		if _, err := sem.Acquire(ctx, "exports:tenant-2", 5, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	err = export(ctx, rdb, "tenant-2", "export-2")
	var full *semaphore.FullError
	if !errors.Is(err, semaphore.ErrFull) || !errors.As(err, &full) {
		t.Fatalf("an export of a tenant with 5 running returned %v, want ErrFull with a *FullError", err)
	}
	if got := exportsOf("export-2"); len(got) != 0 {
		t.Fatalf("an export ran beyond the tenant's 5: %v", got)
	}

	if err := export(ctx, nil, "tenant-3", "export-3"); !errors.Is(err, semaphore.ErrNilClient) {
		t.Fatalf("a nil client returned %v, want ErrNilClient", err)
	}
	dead := s.Client(t)
	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}
	if err := export(ctx, dead, "tenant-3", "export-3"); err == nil || errors.Is(err, semaphore.ErrFull) {
		t.Fatalf("a closed client returned %v, want its error", err)
	}
	if got := exportsOf("export-3"); len(got) != 0 {
		t.Fatalf("an export ran without a permit: %v", got)
	}
}
