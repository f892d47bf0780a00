package redistest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// FillMemory makes the server short of memory, as a cache sharing it
// would: it sets maxmemory to 1 MB above what is used, then writes 4 MB of
// 4 KB values under prefix, each with ttl (0 for none). Under an evicting
// maxmemory-policy the server evicts keys to make room; under noeviction,
// or volatile-* with ttl 0, the writes fail and so does t. It returns the
// server's evicted_keys afterwards.
func FillMemory(t testing.TB, c *redis.Client, prefix string, ttl time.Duration) int64 {
	t.Helper()
	ctx := context.Background()
	used := infoInt(t, c, "memory", "used_memory")
	if err := c.ConfigSet(ctx, "maxmemory", fmt.Sprint(used+1<<20)).Err(); err != nil {
		t.Fatal(err)
	}
	v := strings.Repeat("x", 4<<10)
	for i := range 1024 {
		if err := c.Set(ctx, fmt.Sprint(prefix, i), v, ttl).Err(); err != nil {
			t.Fatalf("redistest: fill memory: %v", err)
		}
	}
	return infoInt(t, c, "stats", "evicted_keys")
}

func infoInt(t testing.TB, c *redis.Client, section, field string) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			var n int64
			if _, err := fmt.Sscan(v, &n); err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("redistest: INFO %s has no %s", section, field)
	return 0
}
