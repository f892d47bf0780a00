package goredisadapter_test

import (
	"context"
	"testing"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// What one script call costs the client through the adapter: a write
// (sent at most once, in a reused pipeline) and a resendable call.
//
//	go test -run '^$' -bench Run -benchmem
func BenchmarkRun(b *testing.B) {
	s := redistest.Start(b)
	c := goredisadapter.New(s.Client(b))
	ctx := context.Background()
	key := []string{s.Prefix() + "n"}
	for _, sc := range []*luascripts.Script{
		luascripts.New("write", "return redis.call('INCR', KEYS[1])"),
		luascripts.NewIdempotent("resendable", "return redis.call('INCR', KEYS[1])"),
	} {
		b.Run(sc.Name(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := sc.Run(ctx, c, key, 1, "x").Err; err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
