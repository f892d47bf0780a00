package bench

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Print writes the report as readable tables.
func (r *Report) Print(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "redis-primitives benchmarks: %s\n", r.Started.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "machine: %s, %d cores, %s RAM, %s %s, Redis %s; load average %s at start, %s at end\n",
		m.CPU, m.Cores, m.Memory, m.Go, m.Platform, m.Redis, m.LoadStart, m.LoadEnd)
	fmt.Fprintf(w, "run: %d rounds of %gs per contender, %d goroutines, %d keys; took %.0fs\n",
		r.Config.Rounds, r.Config.DurationSeconds, r.Config.Goroutines, r.Config.Keys, r.Took)
	fmt.Fprintln(w, "rows: median round by rate; × ref: median over rounds of (rate ÷ the ref row's rate in the same round);")
	fmt.Fprintln(w, "latency per operation; allocs and bytes per operation from runtime.MemStats deltas of the whole process;")
	fmt.Fprintln(w, "cli CPU: the client's CPU time per operation (getrusage: this process, or redis-benchmark's);")
	fmt.Fprintln(w, "srv CPU: redis-server's CPU time per operation (INFO cpu); srv cmd: the part its commands took (INFO commandstats).")
	if l := r.Limit; l != nil {
		fmt.Fprintf(w, "\nThe limit: redis-benchmark, EVALSHA of one SET NX PX, %d clients, not pipelined: %s calls/s (p50 %s µs, p99 %s µs; rounds %s).\n",
			r.Config.Goroutines, num(l.Rate), num1(l.P50), num1(l.P99), rounds(l.Rounds))
		fmt.Fprintf(w, "An acquire+release pair is two such calls at best: the ceiling is %s pairs/s.\n", num(l.Rate/2))
	}
	for _, t := range r.Tables {
		fmt.Fprintf(w, "\n%s (× ref: ÷ %s)\n", t.Title, t.Ref)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s\t%s\t%s\t× ref\tp50 µs\tp99 µs\tallocs/op\tB/op\tcli CPU µs/op\tsrv CPU µs/op\tsrv cmd µs/op\trounds (%s)\t\n", "", t.Unit, t.OKUnit, t.Unit)
		for _, row := range t.Rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%.1f\t%s\t\n", row.Name, num(row.Rate), num(row.OKRate), row.Ratio,
				num1(row.P50), num1(row.P99), alloc(row.AllocsPerOp), alloc(row.BytesPerOp), row.ClientCPU, row.ServerCPU, row.ServerCmd, rounds(row.Rounds))
		}
		_ = tw.Flush()
	}
	if len(r.Tables) > 0 {
		fmt.Fprintln(w, "\nWhat each row does:")
		seen := map[string]bool{}
		for _, t := range r.Tables {
			for _, row := range t.Rows {
				if !seen[row.Name] && row.Note != "" {
					seen[row.Name] = true
					fmt.Fprintf(w, "  %-30s %s\n", row.Name, row.Note)
				}
			}
		}
	}
	if len(r.Memory) > 0 {
		fmt.Fprintf(w, "\nMemory per key: keys filled with %d requests more than their limit per %v admits (MEMORY USAGE SAMPLES 0, summed over a key's Redis keys)\n",
			memoryExtra, memoryQuota.window)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\tlimit\tkeys\tMEMORY USAGE B/key\tused_memory B/key\tRedis keys\tadmitted/key\tB/admitted\tmax log members\tparts (B/key)\t")
		for _, m := range r.Memory {
			per, members := "", ""
			if m.PerAdmitted > 0 {
				per = fmt.Sprintf("%.1f", m.PerAdmitted)
				members = strconv.FormatInt(m.MaxMembers, 10)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.0f\t%d\t%.0f\t%s\t%s\t%s\t\n", m.Name, m.Limit, m.Keys, m.UsagePerKey, m.UsedMemoryPerKey,
				m.RedisKeys, m.Admitted, per, members, parts(m.Parts))
		}
		_ = tw.Flush()
	}
	if len(r.SemaphoreMemory) > 0 {
		fmt.Fprintln(w, "\nMemory per semaphore permit: one semaphore filled with live permits (MEMORY USAGE SAMPLES 0 of its sorted set and hash)")
		for _, m := range r.SemaphoreMemory {
			fmt.Fprintf(w, "  %5d permits: %.0f B per permit (and %d B for the semaphore's token counter)\n", m.Permits, m.UsagePerPermit, m.Counter)
		}
	}
	if e := r.Election; e != nil {
		fmt.Fprintf(w, "\nElection: lease %gms, renew every %gms, %d trials (ms)\n", e.TTLms, e.RenewMs, e.Handover.N)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\tmedian\tmin\tmax\t")
		for _, s := range []struct {
			name string
			st   Stat
		}{{"clean handover (leader stops and releases)", e.Handover},
			{"failover (leader stops renewing, no release)", e.Failover},
			{"lease remaining at the stall", e.Remaining},
			{"failover minus remaining", e.FailoverExcess}} {
			fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t\n", s.name, s.st.Median, s.st.Min, s.st.Max)
		}
		_ = tw.Flush()
	}
	if len(r.Targets) > 0 {
		fmt.Fprintln(w, "\nTargets")
		met := 0
		for _, t := range r.Targets {
			mark := "MISSED"
			if t.Met {
				mark, met = "met", met+1
			}
			got := fmt.Sprintf("%.2f", t.Got)
			if t.Unit != "×" {
				got += " " + t.Unit
			} else {
				got += "×"
			}
			fmt.Fprintf(w, "  %-6s %-90s %12s (want %s)\n", mark, t.What, got, t.Want)
			if t.Detail != "" {
				fmt.Fprintf(w, "         %s\n", t.Detail)
			}
		}
		fmt.Fprintf(w, "  %d of %d targets met\n", met, len(r.Targets))
	}
}

// num formats a rate with thousands separators.
func num(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func num1(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

func alloc(v float64) string {
	if v < 0 {
		return "–"
	}
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func parts(p map[string]float64) string {
	names := make([]string, 0, len(p))
	for k := range p {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, k := range names {
		out[i] = fmt.Sprintf("%s %.0f", k, p[k])
	}
	return strings.Join(out, " + ")
}

func rounds(rs []float64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = num(r)
	}
	return strings.Join(parts, " ")
}
