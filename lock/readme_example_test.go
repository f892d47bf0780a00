package lock_test

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
	"github.com/redis-primitives/go/lock"
)

// chargeOnce is the README's lock quickstart, word for word
// (examples/snippets_test.go checks it).
func chargeOnce(ctx context.Context, rdb *redis.Client, account int) error {
	locker, err := lock.New(goredisadapter.New(rdb))
	if err != nil {
		return err // a nil client or a bad option
	}
	lease, err := locker.Acquire(ctx, fmt.Sprintf("account-%d", account), 10*time.Second)
	if errors.Is(err, lock.ErrHeld) {
		return nil // another process is charging it; *lock.HeldError says who and for how long
	}
	if err != nil {
		return err // Redis unreachable or ctx done: there is no lease
	}
	defer locker.Release(ctx, lease)                // compare-and-delete: never deletes the next holder's lock
	return chargeAccount(ctx, account, lease.Token) // the token travels with every write
}

// charged records the tokens chargeAccount was called with, per account,
// for the tests of the snippets that call it.
var charged = struct {
	sync.Mutex
	tokens map[int][]int64
}{tokens: map[int][]int64{}}

func chargeAccount(ctx context.Context, id int, token int64) error {
	charged.Lock()
	charged.tokens[id] = append(charged.tokens[id], token)
	charged.Unlock()
	return ctx.Err()
}

func chargesOf(id int) []int64 {
	charged.Lock()
	defer charged.Unlock()
	return append([]int64(nil), charged.tokens[id]...)
}

// Each branch of the README's quickstart: the charge made with the lease's
// token and the lock released after it; a lock another process holds
// skipped without a charge; an error (a closed client, a nil one) returned
// without a charge.
func TestTheReadmesLockSnippetChargesWithItsTokenSkipsAHeldLockAndReturnsErrors(t *testing.T) {
	s := redistest.Start(t, redistest.Own()) // the snippet's lock names have no test prefix
	rdb := client(t, s)
	ctx := context.Background()
	locker, err := lock.New(goredisadapter.New(rdb))
	if err != nil {
		t.Fatal(err)
	}

	const free, held, closed = 9001, 9002, 9003
	if err := chargeOnce(ctx, rdb, free); err != nil {
		t.Fatalf("charging an account nobody holds: %v", err)
	}
	if got := chargesOf(free); len(got) != 1 || got[0] <= 0 {
		t.Fatalf("charges of a free account: %v, want one, with a positive token", got)
	}
	after, err := locker.Acquire(ctx, fmt.Sprintf("account-%d", free), time.Second)
	if err != nil {
		t.Fatalf("the lock after the snippet returned: %v, want it released", err)
	}
	if after.Token <= chargesOf(free)[0] {
		t.Fatalf("the next holder's token %d is not above the snippet's %d", after.Token, chargesOf(free)[0])
	}

	other, err := locker.Acquire(ctx, fmt.Sprintf("account-%d", held), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := chargeOnce(ctx, rdb, held); err != nil {
		t.Fatalf("charging an account another process holds returned %v, want nil (skipped)", err)
	}
	if got := chargesOf(held); len(got) != 0 {
		t.Fatalf("an account another process holds was charged: %v", got)
	}
	if _, err := locker.Release(ctx, other); err != nil {
		t.Fatalf("the other holder's lock after the snippet skipped it: %v, want it still held", err)
	}

	if err := chargeOnce(ctx, nil, closed); !errors.Is(err, lock.ErrNilClient) {
		t.Fatalf("a nil client returned %v, want ErrNilClient", err)
	}
	dead := client(t, s)
	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}
	if err := chargeOnce(ctx, dead, closed); err == nil || errors.Is(err, lock.ErrHeld) {
		t.Fatalf("a closed client returned %v, want its error", err)
	}
	if got := chargesOf(closed); len(got) != 0 {
		t.Fatalf("an account was charged without a lease: %v", got)
	}
}
