package bench

import (
	"context"
	"slices"
	"sort"
	"time"
)

// Row names. The JSON and the test refer to rows by them.
const (
	NameLimit                = "the limit ÷ 2 (redis-benchmark)"
	NameOursLock             = "redis-primitives/lock"
	NameRedislock            = "bsm/redislock"
	NameRedsync              = "go-redsync/redsync"
	NameOursLockBatch        = "redis-primitives/lock + batching"
	NameRueidislock          = "redis/rueidislock"
	NameOursLockRueidis      = "redis-primitives/lock on rueidis"
	NameOursLockRueidisBatch = "redis-primitives/lock on rueidis + batching"
	NameOursLockValkey       = "redis-primitives/lock on valkey-go"
	NameOursLog              = "ours: sliding log"
	NameOursCounter          = "ours: sliding counter"
	NameOursGCRA             = "ours: GCRA"
	NameOursPolicy           = "ours: policy of 2 limits"
	NameRedisRate            = "go-redis/redis_rate"
	NameUlule                = "ulule/limiter (fixed window)"
	NamePlainLog             = "plain sorted-set log (memory reference)"
	NameOursDeny             = "ours: GCRA + deny cache"
	NameOursBatch            = "ours: GCRA + batching"
	NameOursReserve          = "ours: GCRA Reserve+Commit"
	NameOursGCRARueidis      = "ours: GCRA on rueidis"
	NameOursGCRARueidisBatch = "ours: GCRA on rueidis + batching"
	NameOursGCRAValkey       = "ours: GCRA on valkey-go"
	NameLimitP16             = "pipelined limit (redis-benchmark -P 16)"
	NameOursSemaphore        = "redis-primitives/semaphore"
	NameNaiveSemaphore       = "naive INCR/DECR semaphore"
)

// Table ids.
const (
	TableLockMany        = "lock-many-keys"
	TableLockHot         = "lock-one-key"
	TableLimitHotAdmit   = "limiter-hot-admit"
	TableLimitManyAdmit  = "limiter-many-admit"
	TableLimitHotReject  = "limiter-hot-reject"
	TableLimitManyReject = "limiter-many-reject"
	TableLimitLongKeys   = "limiter-long-keys-admit"
	TableSemaphoreMany   = "semaphore-many-keys"
	// TableLimitSweep + a quota ("5/1h0m0s") names each table of the sweep.
	TableLimitSweep = "limiter-sweep-"
)

// Report is everything one run measured.
type Report struct {
	Started time.Time   `json:"started"`
	Took    float64     `json:"took_seconds"`
	Config  ConfigJSON  `json:"config"`
	Machine Machine     `json:"machine"`
	Limit   *Row        `json:"limit,omitempty"`
	Tables  []Table     `json:"tables"`
	Memory  []MemoryRow `json:"memory"`
	// SemaphoreMemory is the memory of live permits, per permit.
	SemaphoreMemory []SemaphoreMemory `json:"semaphore_memory,omitempty"`
	Election        *Election         `json:"election,omitempty"`
	Targets         []Target          `json:"targets"`
}

// ConfigJSON is Config as the JSON records it.
type ConfigJSON struct {
	DurationSeconds float64 `json:"duration_seconds"`
	Goroutines      int     `json:"goroutines"`
	Rounds          int     `json:"rounds"`
	Keys            int     `json:"keys"`
	MemoryKeys      int     `json:"memory_keys"`
	Trials          int     `json:"election_trials"`
}

// Table is one case: the same operation by every contender.
type Table struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Unit   string `json:"unit"`
	OKUnit string `json:"ok_unit"`
	// Ref names the row every ratio divides by.
	Ref  string `json:"ref"`
	Rows []Row  `json:"rows"`
}

// Row is one contender's median round.
type Row struct {
	Name string `json:"name"`
	Note string `json:"note,omitempty"`
	// Rate is operations per second in the median round (by rate), OKRate
	// those that got what they asked for (acquired, admitted).
	Rate   float64 `json:"rate"`
	OKRate float64 `json:"ok_rate"`
	// Ratio is the median over rounds of this row's rate divided by the
	// reference row's rate in the same round.
	Ratio float64 `json:"ratio_to_ref"`
	// P50 and P99 are per-operation latencies in microseconds, from the
	// median round.
	P50 float64 `json:"p50_us"`
	P99 float64 `json:"p99_us"`
	// AllocsPerOp and BytesPerOp come from runtime.MemStats deltas over
	// the median round; -1 when not measured (the limit).
	AllocsPerOp float64 `json:"allocs_per_op"`
	BytesPerOp  float64 `json:"bytes_per_op"`
	// ServerCPU is the redis-server process's CPU time per operation
	// (INFO cpu), ServerCmd the part its commands took (INFO
	// commandstats), in microseconds, over the median round.
	ServerCPU float64 `json:"server_cpu_us_per_op"`
	ServerCmd float64 `json:"server_commands_us_per_op"`
	// ClientCPU is the client's CPU time per operation in microseconds:
	// this process's (getrusage), or redis-benchmark's for the limit.
	ClientCPU float64 `json:"client_cpu_us_per_op"`
	// Rounds holds the rate of every round, in order.
	Rounds []float64 `json:"rounds"`
}

// Target is one of the targets, with the figure this run got.
type Target struct {
	What   string  `json:"what"`
	Want   string  `json:"want"`
	Got    float64 `json:"got"`
	Unit   string  `json:"unit"`
	Met    bool    `json:"met"`
	Detail string  `json:"detail,omitempty"`
}

// contender is one row of a case.
type contender struct {
	name, note string
	ref        bool
	run        func(ctx context.Context, d time.Duration) (sample, error)
	// prepare, if set, runs once before the warm-up.
	prepare func(ctx context.Context) error
}

// benchCase is a table being measured.
type benchCase struct {
	id, title    string
	unit, okUnit string
	ref          string
	contenders   []contender
	samples      [][]sample // [contender][round]
}

// order returns the contenders' order in round r: as listed in even
// rounds, reversed in odd ones (A B C, C B A, A B C, …).
func order(n, r int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	if r%2 == 1 {
		slices.Reverse(idx)
	}
	return idx
}

// table turns the samples of a case into rows.
func (c *benchCase) table() Table {
	t := Table{ID: c.id, Title: c.title, Unit: c.unit, OKUnit: c.okUnit, Ref: c.ref}
	ref := -1
	for i, ct := range c.contenders {
		if ct.name == c.ref {
			ref = i
		}
	}
	for i, ct := range c.contenders {
		t.Rows = append(t.Rows, rowOf(ct.name, ct.note, c.samples[i], refSamples(c, ref)))
	}
	return t
}

func refSamples(c *benchCase, ref int) []sample {
	if ref < 0 {
		return nil
	}
	return c.samples[ref]
}

// rowOf summarises the rounds of one contender: the median round by rate,
// and the median of its per-round ratios to ref.
func rowOf(name, note string, ss, ref []sample) Row {
	row := Row{Name: name, Note: note}
	if len(ss) == 0 {
		return row
	}
	byRate := slices.Clone(ss)
	sort.Slice(byRate, func(i, j int) bool { return byRate[i].rate() < byRate[j].rate() })
	m := byRate[(len(byRate)-1)/2]
	row.Rate, row.OKRate = m.rate(), m.okRate()
	row.P50, row.P99 = us(m.p50), us(m.p99)
	row.AllocsPerOp, row.BytesPerOp = m.perOp(m.Mallocs), m.perOp(m.Bytes)
	row.ServerCPU, row.ServerCmd = m.srvPerOp(m.SrvCPU), m.srvPerOp(m.SrvCmd)
	row.ClientCPU = m.srvPerOp(m.CliCPU)
	var ratios []float64
	for i, s := range ss {
		row.Rounds = append(row.Rounds, s.rate())
		if i < len(ref) && ref[i].rate() > 0 {
			ratios = append(ratios, s.rate()/ref[i].rate())
		}
	}
	row.Ratio = median(ratios)
	return row
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// median of xs (the lower middle value for an even count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

// Row returns the row called name in the table with id, if any.
func (r *Report) Row(table, name string) (Row, bool) {
	for _, t := range r.Tables {
		if t.ID != table {
			continue
		}
		for _, row := range t.Rows {
			if row.Name == name {
				return row, true
			}
		}
	}
	return Row{}, false
}
