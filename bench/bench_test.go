package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/bench"
	"github.com/redis-primitives/go/internal/redistest"
)

// The tables a report must hold, each with every row. A run that drops a
// library, an algorithm or the limit fails here, whatever its speed.
var wantRows = map[string][]string{
	bench.TableLockMany:      {bench.NameOursLock, bench.NameOursLockBatch, bench.NameOursLockRueidis, bench.NameOursLockRueidisBatch, bench.NameOursLockValkey, bench.NameRueidislock, bench.NameRedislock, bench.NameRedsync, bench.NameLimit},
	bench.TableLockHot:       {bench.NameOursLock, bench.NameOursLockBatch, bench.NameOursLockRueidis, bench.NameOursLockRueidisBatch, bench.NameOursLockValkey, bench.NameRueidislock, bench.NameRedislock, bench.NameRedsync},
	bench.TableSemaphoreMany: {bench.NameOursSemaphore, bench.NameOursLock, bench.NameNaiveSemaphore},
}

var limiterRows = []string{bench.NameOursLog, bench.NameOursCounter, bench.NameOursGCRA, bench.NameOursPolicy, bench.NameOursDeny, bench.NameOursBatch, bench.NameOursReserve, bench.NameRedisRate, bench.NameUlule}

// adapterRows are our GCRA through the client adapters: in the throughput
// tables, not in the memory table (their keys are GCRA's).
var adapterRows = []string{bench.NameOursGCRARueidis, bench.NameOursGCRARueidisBatch, bench.NameOursGCRAValkey}

func init() {
	throughput := append(append([]string(nil), limiterRows...), adapterRows...)
	for _, id := range []string{bench.TableLimitHotAdmit, bench.TableLimitManyAdmit, bench.TableLimitHotReject, bench.TableLimitManyReject} {
		wantRows[id] = throughput
	}
	wantRows[bench.TableLimitLongKeys] = throughput
	for _, q := range []string{"5/1h0m0s", "100/1m0s", "1000000000/1s"} {
		wantRows[bench.TableLimitSweep+q] = []string{bench.NameOursCounter, bench.NameOursGCRA, bench.NameOursBatch, bench.NameRedisRate}
	}
	wantRows[bench.TableLimitManyAdmit] = append(append([]string(nil), throughput...), bench.NameLimitP16)
}

// A quick run end to end against a fixture server must produce every
// table, every row with figures from every round, the memory of every
// limiter, the election's trials and every target. It asserts the shape of
// the report and what the workload guarantees (an uncontended lock is
// always acquired, a spent limit always rejects), never a speed.
func TestQuickRunReportsEveryRowOfEveryTable(t *testing.T) {
	s := redistest.Start(t)
	cfg := bench.QuickConfig()
	cfg.Duration = 100 * time.Millisecond
	cfg.Goroutines = 4
	cfg.Keys = 40
	cfg.MemoryKeys = 4
	cfg.Trials = 1
	cfg.Prefix = s.Prefix() + "bench:"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := bench.Run(ctx, s.Addr(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("quick run took %.1fs", rep.Took)

	if len(rep.Tables) != len(wantRows) {
		t.Errorf("%d tables, want %d", len(rep.Tables), len(wantRows))
	}
	for id, names := range wantRows {
		for _, name := range names {
			row, ok := rep.Row(id, name)
			if !ok {
				t.Errorf("table %s has no row %q", id, name)
				continue
			}
			if len(row.Rounds) != cfg.Rounds {
				t.Errorf("%s / %s: %d rounds, want %d", id, name, len(row.Rounds), cfg.Rounds)
			}
			if row.Rate <= 0 || row.Ratio <= 0 || row.P50 <= 0 || row.P99 < row.P50 {
				t.Errorf("%s / %s: rate %v, ratio %v, p50 %v, p99 %v: want all positive and p99 ≥ p50", id, name, row.Rate, row.Ratio, row.P50, row.P99)
			}
			if measured := name != bench.NameLimit && name != bench.NameLimitP16; measured != (row.AllocsPerOp > 0) {
				t.Errorf("%s / %s: allocs/op %v (measured in process: %v)", id, name, row.AllocsPerOp, measured)
			}
			switch id {
			case bench.TableLockMany, bench.TableSemaphoreMany, bench.TableLimitHotAdmit, bench.TableLimitManyAdmit, bench.TableLimitLongKeys, bench.TableLimitSweep + "1000000000/1s":
				if row.OKRate != row.Rate {
					t.Errorf("%s / %s: %v of %v ops/s got what they asked for, want all", id, name, row.OKRate, row.Rate)
				}
			case bench.TableLimitHotReject, bench.TableLimitManyReject:
				if row.OKRate != 0 {
					t.Errorf("%s / %s: %v admitted/s on spent keys, want 0", id, name, row.OKRate)
				}
			case bench.TableLockHot:
				if row.OKRate <= 0 || row.OKRate > row.Rate {
					t.Errorf("%s / %s: %v acquired/s of %v attempts/s", id, name, row.OKRate, row.Rate)
				}
			}
		}
	}
	if rep.Limit == nil || rep.Limit.Rate <= 0 {
		t.Errorf("no figure for the limit: %+v", rep.Limit)
	}

	// Every limiter at a limit of 100, a plain sorted-set log beside them,
	// and the log again at 1,000.
	if len(rep.Memory) != len(limiterRows)+2 {
		t.Errorf("memory of %d rows, want %d", len(rep.Memory), len(limiterRows)+2)
	}
	logs := 0
	for _, m := range rep.Memory {
		if m.Keys < 1 || m.RedisKeys < m.Keys || m.UsagePerKey <= 0 {
			t.Errorf("memory %s: %d keys, %d Redis keys, %v B/key", m.Name, m.Keys, m.RedisKeys, m.UsagePerKey)
		}
		// Every limiter admits at least its limit in a minute, and none
		// all of the requests sent (a sliding counter may admit a few more
		// than the limit when the fill straddles a minute boundary).
		if m.Admitted < float64(m.Limit) || m.Admitted >= float64(m.Sent) {
			t.Errorf("memory %s: %v admitted per key of %d sent under a limit of %d", m.Name, m.Admitted, m.Sent, m.Limit)
		}
		if m.Name == bench.NameOursLog {
			logs++
			if m.Admitted != float64(m.Limit) || m.MaxMembers != int64(m.Limit) || m.PerAdmitted <= 0 {
				t.Errorf("sliding log, limit %d: %v admitted per key, %d members at most, %v B per admitted request; want the limit, the limit",
					m.Limit, m.Admitted, m.MaxMembers, m.PerAdmitted)
			}
		}
	}
	if logs != 2 {
		t.Errorf("%d memory rows for the sliding log, want 2 (limits 100 and 1,000)", logs)
	}

	// Live permits cost memory; at 1,000 a permit costs more than at 100,
	// past the listpack encodings, but the same order.
	if len(rep.SemaphoreMemory) != 2 {
		t.Errorf("semaphore memory of %d sizes, want 2", len(rep.SemaphoreMemory))
	}
	for _, m := range rep.SemaphoreMemory {
		if m.Permits < 1 || m.UsagePerPermit <= 0 || m.Counter <= 0 {
			t.Errorf("semaphore memory %+v: want positive figures", m)
		}
	}

	e := rep.Election
	if e == nil {
		t.Fatal("no election figures")
	}
	for name, st := range map[string]bench.Stat{"handover": e.Handover, "failover": e.Failover, "remaining": e.Remaining} {
		if st.N != cfg.Trials || len(st.All) != cfg.Trials || st.Min <= 0 || st.Min > st.Median || st.Median > st.Max {
			t.Errorf("election %s: %+v, want %d positive trials", name, st, cfg.Trials)
		}
	}

	if len(rep.Targets) != 31 {
		t.Errorf("%d targets, want 31 (7 lock, 18 limiter, 4 memory, 2 election)", len(rep.Targets))
	}

	var out bytes.Buffer
	rep.Print(&out)
	for _, name := range append([]string{bench.NameOursLock, bench.NameRedislock, bench.NameRedsync, bench.NameLimit, "Targets", "Election", "Memory per key"}, limiterRows...) {
		if !strings.Contains(out.String(), name) {
			t.Errorf("printed report lacks %q", name)
		}
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Errorf("report does not marshal to JSON: %v", err)
	}
}

// A bad configuration is refused before anything touches the server.
func TestBadConfigIsRefusedWithoutARoundTrip(t *testing.T) {
	cfg := bench.QuickConfig()
	cfg.Keys = cfg.Goroutines - 1
	if _, err := bench.Run(context.Background(), "127.0.0.1:1", cfg); err == nil || !strings.Contains(err.Error(), "keys") {
		t.Errorf("keys below goroutines: err %v, want the keys refused", err)
	}
}
