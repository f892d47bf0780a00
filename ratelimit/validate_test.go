package ratelimit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/ratelimit"
)

func TestBadInputIsATypedErrorWithoutARoundTrip(t *testing.T) {
	// No server at all: any attempt to reach one would fail with a dial
	// error instead of the typed error.
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 50 * time.Millisecond})
	defer c.Close()
	l, err := ratelimit.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	ok := ratelimit.SlidingLog(5, time.Second)
	cases := []struct {
		name string
		key  string
		rule ratelimit.Rule
		n    int
		want error
	}{
		{"zero limit", "k", ratelimit.SlidingLog(0, time.Second), 1, ratelimit.ErrInvalidLimit},
		{"negative limit", "k", ratelimit.SlidingCounter(-1, time.Second), 1, ratelimit.ErrInvalidLimit},
		{"zero window", "k", ratelimit.SlidingLog(5, 0), 1, ratelimit.ErrInvalidLimit},
		{"negative window", "k", ratelimit.SlidingCounter(5, -time.Second), 1, ratelimit.ErrInvalidLimit},
		{"sub-millisecond window", "k", ratelimit.SlidingLog(5, 999*time.Microsecond), 1, ratelimit.ErrInvalidLimit},
		{"zero burst", "k", ratelimit.GCRA(5, time.Second, 0), 1, ratelimit.ErrInvalidLimit},
		{"gcra too large to count exactly", "k", ratelimit.GCRA(1, 24*time.Hour, 1_000_000), 1, ratelimit.ErrInvalidLimit},
		{"zero Limit", "k", ratelimit.Limit{}, 1, ratelimit.ErrInvalidLimit},
		{"nil rule", "k", nil, 1, ratelimit.ErrInvalidLimit},
		{"empty policy", "k", ratelimit.Policy{}, 1, ratelimit.ErrInvalidLimit},
		{"duplicate in policy", "k", ratelimit.Policy{ok, ok.Named("other")}, 1, ratelimit.ErrInvalidLimit},
		{"n zero", "k", ok, 0, ratelimit.ErrInvalidN},
		{"n negative", "k", ok, -3, ratelimit.ErrInvalidN},
		{"n over limit", "k", ok, 6, ratelimit.ErrInvalidN},
		{"n over burst", "k", ratelimit.GCRA(100, time.Second, 10), 11, ratelimit.ErrInvalidN},
		{"n over a policy's smaller limit", "k", ratelimit.Policy{ok, ratelimit.SlidingLog(2, time.Minute)}, 3, ratelimit.ErrInvalidN},
		{"empty key", "", ok, 1, ratelimit.ErrInvalidKey},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls := map[string]func() error{
				"AllowN": func() error { _, err := l.AllowN(ctx, tc.key, tc.rule, tc.n); return err },
				"Take":   func() error { _, err := l.Take(ctx, tc.key, tc.rule, tc.n); return err },
			}
			if tc.n == 1 {
				calls["Allow"] = func() error { _, err := l.Allow(ctx, tc.key, tc.rule); return err }
				calls["Peek"] = func() error { _, err := l.Peek(ctx, tc.key, tc.rule); return err }
				calls["Wait"] = func() error { _, err := l.Wait(ctx, tc.key, tc.rule); return err }
			}
			for name, call := range calls {
				if err := call(); !errors.Is(err, tc.want) {
					t.Errorf("%s: err = %v, want %v", name, err, tc.want)
				}
			}
		})
	}

	if _, err := ratelimit.New(goredisadapter.New((*redis.Client)(nil))); !errors.Is(err, ratelimit.ErrNilClient) {
		t.Errorf("New(goredisadapter.New(typed nil client)): %v", err)
	}
	if _, err := ratelimit.New((*goredisadapter.Client)(nil)); !errors.Is(err, ratelimit.ErrNilClient) {
		t.Errorf("New(typed nil adapter): %v", err)
	}
	if _, err := ratelimit.New(nil); !errors.Is(err, ratelimit.ErrNilClient) {
		t.Errorf("New(nil): %v", err)
	}
	if _, err := ratelimit.New(goredisadapter.New(c), ratelimit.WithPrefix("x{")); !errors.Is(err, ratelimit.ErrInvalidOption) {
		t.Errorf("New with a brace in the prefix: %v", err)
	}
}

// An empty prefix would put every limit's keys among the application's
// own, unmarked: refused, as lock and semaphore refuse it, in their words.
func TestAnEmptyPrefixIsRefusedAsLockAndSemaphoreRefuseIt(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 50 * time.Millisecond})
	defer c.Close()
	_, err := ratelimit.New(goredisadapter.New(c), ratelimit.WithPrefix(""))
	if !errors.Is(err, ratelimit.ErrInvalidOption) || !strings.HasSuffix(err.Error(), `prefix "" must be non-empty and contain no braces`) {
		t.Fatalf("New(WithPrefix(\"\")): %v, want ErrInvalidOption saying what lock and semaphore say", err)
	}
}
