package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// A call sent to a frozen server times out, and the server runs it when it
// wakes: the caller got context.DeadlineExceeded, and the request was
// counted all the same. A timeout does not mean "not consumed".
func TestAllowThatTimedOutOnAFrozenServerStillConsumesQuotaOnceItWakes(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c := s.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled = true })
	l, err := ratelimit.New(c, ratelimit.WithPrefix(s.Prefix()+"rl:"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const window = 10 * time.Second
	for name, lim := range algorithms(5, window) {
		key := "user:" + name
		// Load the scripts: a first EVALSHA that times out runs nothing.
		if err := l.Reset(ctx, key, lim); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Peek(ctx, key, lim); err != nil {
			t.Fatal(err)
		}
		if _, err := l.AllowN(ctx, "warm:"+name, lim, 1); err != nil {
			t.Fatal(err)
		}
		s.Freeze(t)
		actx, cancel := context.WithTimeout(ctx, window/100)
		_, err := l.AllowN(actx, key, lim, 2)
		cancel()
		s.Thaw(t)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: allow on a frozen server: %v; want a deadline", name, err)
		}
		var res ratelimit.Result
		deadline := time.Now().Add(window / 4)
		for {
			if res, err = l.Peek(ctx, key, lim); err != nil {
				t.Fatal(err)
			}
			if res.Remaining == 3 || time.Now().After(deadline) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		if res.Remaining != 3 {
			t.Fatalf("%s: remaining %d after a timed-out AllowN(2) of 5; want 3: the call ran when the server woke", name, res.Remaining)
		}
		t.Logf("%s: the timed-out AllowN(2) consumed 2 of 5", name)
	}
}
