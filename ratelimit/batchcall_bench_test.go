package ratelimit_test

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// BenchmarkAllowBatchedRules is BenchmarkAllowBatched for every algorithm
// and a Policy of two (50 goroutines on 10k keys, each call admitted), on
// a server of its own, reporting what the server spent per decision:
// srv-µs/op, the usec that INFO commandstats gives the script calls, and
// cpu-µs/op, the server process's CPU (used_cpu_user + used_cpu_sys).
func BenchmarkAllowBatchedRules(b *testing.B) {
	s := redistest.Start(b, redistest.Own())
	c := s.Client(b, func(o *redis.Options) { o.PoolSize = 100 })
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
	}
	rules := []struct {
		name string
		rule ratelimit.Rule
	}{
		{"gcra", ratelimit.GCRA(1_000_000, time.Second, 1_000_000)},
		{"counter", ratelimit.SlidingCounter(1_000_000, time.Second)},
		{"log", ratelimit.SlidingLog(1000, time.Second)},
		{"policy2", ratelimit.Policy{ratelimit.GCRA(1_000_000, time.Second, 1000), ratelimit.SlidingCounter(1_000_000, time.Minute)}},
	}
	for _, r := range rules {
		for _, size := range []int{0, 64} {
			opts := []ratelimit.Option{ratelimit.WithPrefix(s.Prefix() + "rl:")}
			if size > 0 {
				opts = append(opts, ratelimit.WithBatching(size))
			}
			l, err := ratelimit.New(goredisadapter.New(c), opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(r.name+"/batch="+strconv.Itoa(size), func(b *testing.B) {
				ctx := context.Background()
				before := serverSpent(b, c)
				b.ReportAllocs()
				b.SetParallelism(max(50/runtime.GOMAXPROCS(0), 1))
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						i += 7919
						if _, err := l.Allow(ctx, keys[i%len(keys)], r.rule); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.StopTimer()
				after := serverSpent(b, c)
				b.ReportMetric(float64(after.cmd-before.cmd)/float64(b.N), "srv-µs/op")
				b.ReportMetric((after.cpu-before.cpu)*1e6/float64(b.N), "cpu-µs/op")
				b.ReportMetric(float64(after.calls-before.calls)/float64(b.N), "calls/op")
			})
		}
	}
}

type spent struct {
	cmd, calls int64   // script calls' usec and count (INFO commandstats)
	cpu        float64 // the process's CPU seconds
}

func serverSpent(b *testing.B, c *redis.Client) spent {
	info, err := c.Info(context.Background(), "commandstats", "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var s spent
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_eval"); ok {
			_, fields, _ := strings.Cut(rest, ":")
			for _, f := range strings.Split(fields, ",") {
				if v, ok := strings.CutPrefix(f, "usec="); ok {
					n, _ := strconv.ParseInt(v, 10, 64)
					s.cmd += n
				}
				if v, ok := strings.CutPrefix(f, "calls="); ok {
					n, _ := strconv.ParseInt(v, 10, 64)
					s.calls += n
				}
			}
		}
		for _, name := range []string{"used_cpu_user:", "used_cpu_sys:"} {
			if v, ok := strings.CutPrefix(line, name); ok {
				f, _ := strconv.ParseFloat(v, 64)
				s.cpu += f
			}
		}
	}
	return s
}
