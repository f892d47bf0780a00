package ratelimit

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// BenchmarkBatchScriptServerCost: what the server spends per decision
// (INFO commandstats usec of the script calls, and its process CPU) for
// 64 decisions on distinct keys sent from one goroutine as 64
// per-decision calls in one round trip (luascripts.Send, before ADR 0018)
// and as one batch.lua call: the cost of the script and its call, without the
// client's or the scheduler's noise of the 50-goroutine benchmark.
func BenchmarkBatchScriptServerCost(b *testing.B) {
	s := redistest.Start(b, redistest.Own())
	c := s.Client(b)
	gc := goredisadapter.New(c)
	ctx := context.Background()
	rules := []struct {
		name string
		lims []Limit
	}{
		{"gcra", []Limit{GCRA(1_000_000, time.Second, 1_000_000)}},
		{"counter", []Limit{SlidingCounter(1_000_000, time.Second)}},
		{"log", []Limit{SlidingLog(1000, time.Second)}},
		{"policy2", []Limit{GCRA(1_000_000, time.Second, 1000), SlidingCounter(1_000_000, time.Minute)}},
	}
	const size, keys = 64, 10_000
	for _, r := range rules {
		for _, way := range []string{"pipeline", "batch.lua"} {
			b.Run(r.name+"/"+way, func(b *testing.B) {
				k := 0
				calls := make([]luascripts.Call, size)
				idx := seq(size)
				before := spentBy(b, c)
				for i := 0; i < b.N; i += size {
					for j := range calls {
						k = (k + 7919) % keys
						req := newRequest(s.Prefix()+"rl:", "user:"+strconv.Itoa(k), r.lims, modeAllow, 1, "")
						calls[j] = luascripts.Call{Script: script(modeAllow, r.lims), Keys: req.keys, Args: req.args}
					}
					if way == "pipeline" {
						luascripts.Send(ctx, gc, calls)
						continue
					}
					one := []luascripts.Call{batchCall(calls, idx)}
					luascripts.Send(ctx, gc, one)
					if again := splitReply(one[0].Result(), calls, idx, nil); len(again) > 0 || one[0].Err != nil {
						b.Fatal(one[0].Err, len(again))
					}
				}
				after := spentBy(b, c)
				n := float64((b.N + size - 1) / size * size)
				b.ReportMetric(float64(after[0]-before[0])/n, "srv-µs/decision")
				b.ReportMetric(float64(after[1]-before[1])/n, "cpu-µs/decision")
			})
		}
	}
}

// spentBy returns the server's script usec and its CPU in µs.
func spentBy(b *testing.B, c *redis.Client) [2]int64 {
	info, err := c.Info(context.Background(), "commandstats", "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var s [2]int64
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_eval"); ok {
			_, fields, _ := strings.Cut(rest, ":")
			for _, f := range strings.Split(fields, ",") {
				if v, ok := strings.CutPrefix(f, "usec="); ok {
					n, _ := strconv.ParseInt(v, 10, 64)
					s[0] += n
				}
			}
		}
		for _, name := range []string{"used_cpu_user:", "used_cpu_sys:"} {
			if v, ok := strings.CutPrefix(line, name); ok {
				f, _ := strconv.ParseFloat(v, 64)
				s[1] += int64(f * 1e6)
			}
		}
	}
	return s
}
