package ratelimit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

func TestPeekConsumesNothing(t *testing.T) {
	for name, lim := range algorithms(3, time.Minute) {
		t.Run(name, func(t *testing.T) {
			s := redistest.Start(t)
			_, l := limiter(t, s)
			ctx := context.Background()
			for range 20 {
				res, err := l.Peek(ctx, "k", lim)
				if err != nil || !res.Allowed || res.Remaining != 3 || res.Granted != 0 {
					t.Fatalf("Peek on a fresh key = %+v, %v", res, err)
				}
			}
			for i := range 3 {
				if !allow(t, l, "k", lim).Allowed {
					t.Fatalf("request %d rejected after peeks: a peek consumed", i)
				}
			}
			res, err := l.Peek(ctx, "k", lim)
			if err != nil || res.Allowed || res.Remaining != 0 || res.RetryAfter <= 0 {
				t.Fatalf("Peek on a spent key = %+v, %v", res, err)
			}
		})
	}
}

func TestPeekRunsOnAReplicaWhereDecisionsCannotWrite(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	r := s.StartReplica(t)
	_, primary := limiter(t, s)
	lim := ratelimit.SlidingLog(3, time.Minute)
	allow(t, primary, "k", lim)

	rc := r.Client(t)
	replica, err := ratelimit.New(goredisadapter.New(rc), ratelimit.WithPrefix(s.Prefix()+"rl:"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	waitFor(t, func() bool {
		res, err := replica.Peek(ctx, "k", lim)
		if err != nil {
			t.Fatalf("Peek on a replica: %v", err)
		}
		return res.Remaining == 2
	})
	if _, err := replica.Allow(ctx, "k", lim); err == nil || !redis.HasErrorPrefix(err, "READONLY") && !strings.Contains(err.Error(), "READONLY") {
		t.Fatalf("Allow on a replica: %v, want READONLY (the write script must not run there)", err)
	}
}

// waitFor polls cond until it holds, failing after 5s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
