package bench

import (
	"fmt"
	"strings"
)

// ratio is the median over rounds of a's rate divided by b's in the same
// round, in the case with id; 0 when either row is missing.
func ratio(cases []*benchCase, id, a, b string) float64 {
	for _, c := range cases {
		if c.id != id {
			continue
		}
		ia, ib := -1, -1
		for i, ct := range c.contenders {
			switch ct.name {
			case a:
				ia = i
			case b:
				ib = i
			}
		}
		if ia < 0 || ib < 0 {
			return 0
		}
		var rs []float64
		for r := range min(len(c.samples[ia]), len(c.samples[ib])) {
			if d := c.samples[ib][r].rate(); d > 0 {
				rs = append(rs, c.samples[ia][r].rate()/d)
			}
		}
		if len(rs) == 0 {
			return 0
		}
		return median(rs)
	}
	return 0
}

func atLeast(what string, got, want float64) Target {
	return Target{What: what, Want: fmt.Sprintf("≥ %.2f×", want), Got: got, Unit: "×", Met: got >= want}
}

func atMost(what string, got, want float64, unit string) Target {
	return Target{What: what, Want: fmt.Sprintf("≤ %g %s", want, unit), Got: got, Unit: unit, Met: got <= want}
}

// targets checks the targets against this run.
func targets(cases []*benchCase, rep *Report) []Target {
	ts := []Target{
		atLeast("lock, many keys: acquire+release rate ÷ redislock's",
			ratio(cases, TableLockMany, NameOursLock, NameRedislock), 1.0),
		atLeast("lock, many keys: acquire+release rate ÷ the two-round-trip ceiling (the limit ÷ 2)",
			ratio(cases, TableLockMany, NameOursLock, NameLimit), 0.75),
		atLeast("lock, 1 key contended: attempts/s ÷ redislock's",
			ratio(cases, TableLockHot, NameOursLock, NameRedislock), 1.5),
		atLeast("lock + batching, many keys: acquire+release rate ÷ rueidislock's",
			ratio(cases, TableLockMany, NameOursLockBatch, NameRueidislock), 1.0),
		atLeast("lock + batching, 1 key contended: attempts/s ÷ rueidislock's",
			ratio(cases, TableLockHot, NameOursLockBatch, NameRueidislock), 1.0),
		atLeast("lock + batching, many keys: acquire+release rate ÷ redislock's",
			ratio(cases, TableLockMany, NameOursLockBatch, NameRedislock), 1.5),
		atLeast("lock on rueidis, many keys: acquire+release rate ÷ rueidislock's",
			ratio(cases, TableLockMany, NameOursLockRueidis, NameRueidislock), 1.0),
	}
	short := map[string]string{
		TableLimitHotAdmit: "1 hot key, admitting", TableLimitManyAdmit: "many keys, admitting",
		TableLimitHotReject: "1 hot key, rejecting", TableLimitManyReject: "many keys, rejecting",
	}
	for _, id := range []string{TableLimitHotAdmit, TableLimitManyAdmit, TableLimitHotReject, TableLimitManyReject} {
		for _, w := range []struct {
			name string
			want float64
		}{{NameOursCounter, 1.0}, {NameOursGCRA, 1.0}, {NameOursLog, 0.9}, {NameOursPolicy, 0.8}} {
			ts = append(ts, atLeast(fmt.Sprintf("limiter, %s: %s ÷ redis_rate", short[id], w.name),
				ratio(cases, id, w.name, NameRedisRate), w.want))
		}
	}
	ts = append(ts, atLeast("limiter, 1 hot key, rejecting: GCRA + deny cache ÷ redis_rate",
		ratio(cases, TableLimitHotReject, NameOursDeny, NameRedisRate), 10))
	t := atLeast("limiter, many keys, admitting: GCRA + batching ÷ redis_rate",
		ratio(cases, TableLimitManyAdmit, NameOursBatch, NameRedisRate), 2)
	t.Detail = fmt.Sprintf("%.2f of the pipelined limit (redis-benchmark -P 16, a one-command script); unbatched GCRA %.2f of it",
		ratio(cases, TableLimitManyAdmit, NameOursBatch, NameLimitP16), ratio(cases, TableLimitManyAdmit, NameOursGCRA, NameLimitP16))
	ts = append(ts, t)
	var logs []string
	for _, m := range rep.Memory {
		if m.Name == NameOursLog {
			logs = append(logs, fmt.Sprintf("limit %d: %.0f B per key for %.0f admitted, %.1f B per admitted request, at most %d members",
				m.Limit, m.UsagePerKey, m.Admitted, m.PerAdmitted, m.MaxMembers))
		}
	}
	for _, m := range rep.Memory {
		if m.Limit != memoryQuota.n {
			continue
		}
		switch m.Name {
		case NameOursCounter, NameOursGCRA:
			t := atMost(fmt.Sprintf("memory: %s, MEMORY USAGE per key", m.Name), m.UsagePerKey, 88, "B")
			t.Detail = fmt.Sprintf("%d Redis keys for %d keys; used_memory grew %.0f B per key", m.RedisKeys, m.Keys, m.UsedMemoryPerKey)
			ts = append(ts, t)
		case NameOursLog:
			t := atMost("memory: sliding log, members per key after more requests than the limit", float64(m.MaxMembers), float64(memoryQuota.n), "members")
			t.Detail = "MEMORY USAGE: " + strings.Join(logs, "; ")
			ts = append(ts, t)
			for _, p := range rep.Memory {
				if p.Name == NamePlainLog && p.UsagePerKey > 0 {
					t := atMost("memory: sliding log ÷ a plain sorted-set log, MEMORY USAGE per key", m.UsagePerKey/p.UsagePerKey, 1.05, "×")
					t.Detail = fmt.Sprintf("%.0f B vs %.0f B per key, limit %d", m.UsagePerKey, p.UsagePerKey, m.Limit)
					ts = append(ts, t)
				}
			}
		}
	}
	if e := rep.Election; e != nil {
		t := atMost("election: clean handover, median", e.Handover.Median, 3, "ms")
		t.Detail = fmt.Sprintf("min %.2f ms, max %.2f ms over %d trials", e.Handover.Min, e.Handover.Max, e.Handover.N)
		ts = append(ts, t)
		t = atMost("election: failover minus the lease's remaining time at the stall, median", e.FailoverExcess.Median, 10, "ms")
		t.Detail = fmt.Sprintf("failover median %.1f ms (min %.1f, max %.1f); remaining lease at the stall median %.1f ms",
			e.Failover.Median, e.Failover.Min, e.Failover.Max, e.Remaining.Median)
		ts = append(ts, t)
	}
	return ts
}
