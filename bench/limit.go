package bench

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// limitScript is the trivial script the limit is measured with: one SET NX
// PX, the least any lock's acquire can do in one round trip.
const limitScript = `return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])`

// ErrNoRedisBenchmark is returned when redis-benchmark is not on PATH.
var ErrNoRedisBenchmark = errors.New("bench: redis-benchmark not found on PATH " +
	"(Debian/Ubuntu: apt-get install redis-tools; macOS: brew install redis); " +
	"it measures the limit every other row is compared with")

// limitRun measures the limit: redis-benchmark against the same server,
// EVALSHA of limitScript on keys drawn from cfg.Keys, one request in
// flight per client (not pipelined). It sizes the request count from the
// previous run so that each run lasts about cfg.Duration.
type limitRun struct {
	bin     string
	host    string
	port    string
	sha     string
	prefix  string
	clients int
	keys    int
	// pipeline is redis-benchmark's -P: requests in flight per client.
	pipeline int
	// rate is the last measured rate, used to size the next run.
	rate float64
}

func newLimitRun(ctx context.Context, c *redis.Client, addr string, cfg Config) (*limitRun, error) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		return nil, ErrNoRedisBenchmark
	}
	host, port, ok := strings.Cut(addr, ":")
	if !ok {
		return nil, fmt.Errorf("bench: address %q has no port", addr)
	}
	sha, err := c.ScriptLoad(ctx, limitScript).Result()
	if err != nil {
		return nil, fmt.Errorf("bench: load the limit's script: %w", err)
	}
	return &limitRun{bin: bin, host: host, port: port, sha: sha, prefix: cfg.Prefix + "limit:",
		clients: cfg.Goroutines, keys: cfg.Keys, pipeline: 1}, nil
}

// run returns a sample whose Ops and Elapsed give redis-benchmark's rate
// and whose percentiles are redis-benchmark's own (it reports them to the
// microsecond).
func (l *limitRun) run(ctx context.Context, d time.Duration) (sample, error) {
	n := 20_000
	if l.rate > 0 {
		n = max(int(l.rate*d.Seconds()), 2_000)
	}
	cmd := exec.CommandContext(ctx, l.bin,
		"-h", l.host, "-p", l.port, "-c", strconv.Itoa(l.clients), "-n", strconv.Itoa(n),
		"-r", strconv.Itoa(l.keys), "-P", strconv.Itoa(l.pipeline), "--csv",
		"EVALSHA", l.sha, "1", l.prefix+"__rand_int__", "v", "1000")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return sample{}, fmt.Errorf("bench: redis-benchmark: %w: %s", err, ee.Stderr)
		}
		return sample{}, fmt.Errorf("bench: redis-benchmark: %w", err)
	}
	s, err := parseBenchmarkCSV(out, n)
	if err != nil {
		return sample{}, err
	}
	s.CliCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	l.rate = s.rate()
	return s, nil
}

// parseBenchmarkCSV reads redis-benchmark's --csv output: a header, then
// one line per test with rps and latencies in milliseconds.
func parseBenchmarkCSV(out []byte, n int) (sample, error) {
	recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil {
		return sample{}, fmt.Errorf("bench: redis-benchmark output: %w: %q", err, out)
	}
	if len(recs) < 2 {
		return sample{}, fmt.Errorf("bench: redis-benchmark output has no result: %q", out)
	}
	head, row := recs[0], recs[len(recs)-1]
	field := func(name string) (float64, error) {
		for i, h := range head {
			if h == name && i < len(row) {
				return strconv.ParseFloat(row[i], 64)
			}
		}
		return 0, fmt.Errorf("bench: redis-benchmark output has no %q: %q", name, out)
	}
	rps, err := field("rps")
	if err != nil {
		return sample{}, err
	}
	p50, err := field("p50_latency_ms")
	if err != nil {
		return sample{}, err
	}
	p99, err := field("p99_latency_ms")
	if err != nil {
		return sample{}, err
	}
	if rps <= 0 {
		return sample{}, fmt.Errorf("bench: redis-benchmark reported %v requests/s", rps)
	}
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	return sample{
		Ops:     int64(n),
		OK:      int64(n),
		Elapsed: time.Duration(float64(n) / rps * float64(time.Second)),
		p50:     ms(p50),
		p99:     ms(p99),
		noAlloc: true,
	}, nil
}
