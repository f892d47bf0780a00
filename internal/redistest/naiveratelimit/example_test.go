package naiveratelimit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/naiveratelimit"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// The failures these cause are shown by the tests of package ratelimit.

func ExampleFixedWindow() {
	fw := &naiveratelimit.FixedWindow{Client: redis.NewClient(&redis.Options{Addr: "localhost:6379"}), Limit: 100, Window: time.Minute}
	ok, err := fw.Allow(context.Background(), "user:42")
	fmt.Println(ok, err)
}

func ExampleFixedWindow_AllowCrashingAfterIncr() {
	fw := &naiveratelimit.FixedWindow{Client: redis.NewClient(&redis.Options{Addr: "localhost:6379"}), Limit: 100, Window: time.Minute}
	_, _ = fw.AllowCrashingAfterIncr(context.Background(), "user:42") // leaves a counter with no TTL
}

func ExampleSlidingWindow() {
	sw := &naiveratelimit.SlidingWindow{Client: redis.NewClient(&redis.Options{Addr: "localhost:6379"}), Limit: 5, Window: time.Second}
	ok, err := sw.Allow(context.Background(), "user:42")
	fmt.Println(ok, err)
}
