package election_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// When Run's context ends, the contexts derived from it (the term's, and
// the one fn runs with) are cancelled one after another, and the goroutine
// that cancels them may be preempted in between. A fn that returned on its
// context's end before the term's context had ended was taken for a
// resignation: the Hook heard "resigned", and Run returned fn's error
// instead of the context's. unevenCtx makes that order certain: it cancels
// its children one at a time, a pause apart, in the order registered or in
// reverse, so that one of the two runs has fn's context cancelled first.
func TestStoppingRunIsReportedAsStoppedWhenFnReturnsBeforeTheTermEnds(t *testing.T) {
	for _, reverse := range []bool{false, true} {
		s := redistest.Start(t)
		errShutdown := errors.New("fn: shutting down")
		rec := &recorder{}
		cfg := baseConfig(s, "uneven", "a", time.Second, 100*time.Millisecond)
		cfg.Hook = rec.hook()
		e, err := election.New(goredisadapter.New(client(t, s)), cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx := &unevenCtx{Context: context.Background(), done: make(chan struct{}), pause: 200 * time.Millisecond, reverse: reverse}
		done := make(chan error, 1)
		go func() {
			done <- e.Run(ctx, func(ctx context.Context, _ election.Term) error {
				<-ctx.Done()
				return errShutdown
			})
		}()
		rec.nth(t, 5*time.Second, "elected", 1)
		ctx.cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) || errors.Is(err, errShutdown) {
				t.Errorf("children cancelled in reverse order %v: Run returned %v, want context.Canceled", reverse, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal(errRunStuck)
		}
		var reasons []election.Reason
		for _, d := range rec.of("demoted") {
			reasons = append(reasons, d.reason)
		}
		if !slices.Equal(reasons, []election.Reason{election.ReasonStopped}) {
			t.Errorf("children cancelled in reverse order %v: demoted %v, want [%v]", reverse, reasons, election.ReasonStopped)
		}
	}
}

// unevenCtx is a context whose end reaches the contexts derived from it one
// at a time, pause apart (Go's context package derives through AfterFunc
// from a parent that has one).
type unevenCtx struct {
	context.Context
	pause   time.Duration
	reverse bool

	mu   sync.Mutex
	done chan struct{}
	err  error
	fns  []*func()
}

func (c *unevenCtx) Done() <-chan struct{} { return c.done }

func (c *unevenCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *unevenCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	p := &f
	c.fns = append(c.fns, p)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.Index(c.fns, p)
		if i >= 0 {
			c.fns = slices.Delete(c.fns, i, i+1)
		}
		return i >= 0
	}
}

// cancel ends c and returns when every derived context has been told.
func (c *unevenCtx) cancel() {
	c.mu.Lock()
	c.err = context.Canceled
	close(c.done)
	fns := c.fns
	c.fns = nil
	c.mu.Unlock()
	if c.reverse {
		slices.Reverse(fns)
	}
	for i, f := range fns {
		if i > 0 {
			time.Sleep(c.pause)
		}
		(*f)()
	}
}
