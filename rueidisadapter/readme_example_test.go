package rueidisadapter_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/rueidisadapter"
)

// invoice is the README's adapter quickstart, word for word
// (examples/snippets_test.go checks the text; scripts/gen-valkeyadapter.sh
// writes its valkey-go twin, which valkeyadapter's tests run).
func invoice(addr string) error {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}})
	if err != nil {
		return err // nothing answers at addr
	}
	defer rc.Close()
	locker, err := lock.New(rueidisadapter.New(rc), lock.WithPrefix("billing:lock:"))
	if err != nil {
		return err // a bad option
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	lease, err := locker.Acquire(ctx, "invoice-42", 10*time.Second)
	if err != nil {
		return err // lock.ErrHeld, Redis unreachable or too slow: there is no lease
	}
	// ... the work the lock guards ...
	_, err = locker.Release(ctx, lease)
	return err
}

// Each branch of the README's adapter quickstart that its arguments can
// reach: the lock taken and released on the server at addr; a lock another
// process holds refused with ErrHeld; an address where nothing listens
// refused by rueidis.NewClient. (lock.New's error needs a bad option, and
// the snippet's prefix is a good one.)
func TestTheReadmesRueidisSnippetLocksAndReleasesRefusesAHeldLockAndAnAddressOfNothing(t *testing.T) {
	s := redistest.Start(t, redistest.Own()) // the snippet's names have no test prefix
	if err := invoice(s.Addr()); err != nil {
		t.Fatalf("the snippet on a running server: %v", err)
	}
	locker, err := lock.New(rueidisadapter.New(newRueidis(t, rueidis.ClientOption{InitAddress: []string{s.Addr()}})),
		lock.WithPrefix("billing:lock:"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	other, err := locker.Acquire(ctx, "invoice-42", time.Minute)
	if err != nil {
		t.Fatalf("the lock after the snippet returned: %v, want it released", err)
	}
	if err := invoice(s.Addr()); !errors.Is(err, lock.ErrHeld) {
		t.Fatalf("the snippet while another process holds the lock: %v, want ErrHeld", err)
	}
	if released, err := locker.Release(ctx, other); err != nil || !released {
		t.Fatalf("the other holder's release: %v, %v; want its lock untouched by the snippet", released, err)
	}

	port, err := redistest.FreePort() // nothing listens on it
	if err != nil {
		t.Fatal(err)
	}
	if err := invoice(fmt.Sprintf("127.0.0.1:%d", port)); err == nil || errors.Is(err, lock.ErrHeld) {
		t.Fatalf("the snippet on an address of nothing: %v, want the dial's error", err)
	}
}
