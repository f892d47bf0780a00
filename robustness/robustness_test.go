package robustness

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis/go-redis/v9"
)

var (
	verify   = flag.Bool("verify", false, "run the long form (make verify) instead of the smoke")
	duration = flag.Duration("duration", 5*time.Minute, "with -verify: how long the fault runs take in all")
	visDir   = flag.String("vis", "", "where the visualizations of illegal histories go (default with -verify: a new temporary directory; without it, the test's own, removed at its end)")
	summary  = flag.String("summary", "", "write the figures of the run as JSON to this file")
)

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	redistest.VerifyMain(m)
}

// visualizations returns the directory for visualizations of illegal
// histories: -vis, or under -verify a new temporary directory that stays
// for the reader, or else (the smoke, in make test) the test's own, removed
// when it ends so that no run leaves files behind.
func visualizations(t *testing.T) string {
	if *visDir != "" {
		return *visDir
	}
	if !*verify {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("", "robustness-")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHistoriesUnderFaultsAreLinearizable runs every primitive's clients
// against real servers while faults of every kind are injected, and checks
// each recorded history against its model. The smoke (the default) runs a
// few seconds of each scenario; -verify runs for -duration.
func TestHistoriesUnderFaultsAreLinearizable(t *testing.T) {
	plans := map[string]plan{
		"aof":       {budget: 5 * time.Second, runLength: 5 * time.Second, gap: time.Second, names: 1},
		"nopersist": {budget: 4 * time.Second, runLength: 4 * time.Second, gap: time.Second, names: 1},
		"sentinel":  {budget: 5 * time.Second, runLength: 5 * time.Second, gap: 1500 * time.Millisecond, names: 1},
		"cluster":   {budget: 4 * time.Second, runLength: 4 * time.Second, gap: time.Second, names: 1},
		"lagging":   {budget: 7 * time.Second, runLength: 7 * time.Second, gap: time.Second, names: 1},
	}
	if *verify {
		d := *duration
		plans = map[string]plan{
			"aof":       {budget: d / 5, runLength: 20 * time.Second, gap: 2 * time.Second, names: 3},
			"nopersist": {budget: d / 5, runLength: 20 * time.Second, gap: 2 * time.Second, names: 3},
			"sentinel":  {budget: d / 4, runLength: 20 * time.Second, gap: 3 * time.Second, names: 3},
			"cluster":   {budget: d / 6, runLength: 20 * time.Second, gap: 2 * time.Second, names: 3},
			"lagging":   {budget: d * 11 / 60, runLength: 20 * time.Second, gap: 3 * time.Second, names: 3},
		}
	}
	dir := visualizations(t)
	var all []*Result
	faults := NewFaults()
	byClient := map[string]int{}
	start := time.Now()
	for k, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			results, f, ops := runScenario(t, sc, plans[sc.name], k, dir)
			faults.Merge(f)
			all = merge(all, results)
			for c, n := range ops {
				byClient[c] += n
			}
			for _, want := range sc.kinds() {
				if f.Counts()[want] == 0 {
					t.Errorf("no %s was injected", want)
				}
			}
			for _, r := range results {
				if r.Ops == 0 {
					t.Errorf("%s: no operations recorded", r.Model)
				}
				for _, p := range r.Problems {
					t.Error(p)
				}
				if n := r.Verdicts[Undecided]; n > 0 {
					t.Errorf("%s: %d histories undecided: the checker timed out", r.Model, n)
				}
				switch {
				case r.Model == tokensModel && r.Verdicts[Legal] != r.Histories:
					t.Errorf("default tokens: %d of %d histories legal; they need no excuse: %v", r.Verdicts[Legal], r.Histories, r.Verdicts)
				case r.Model == counterTokensModel:
					t.Logf("WithCounterTokens: %d tokens granted twice; histories %v", r.Reissued, r.Verdicts)
					if sc.name == "lagging" && (r.Reissued == 0 || r.Verdicts[LegalWithLoss] == 0) {
						t.Errorf("WithCounterTokens after a lagging promotion: %d tokens granted twice, %d histories legal given the loss; both were meant to show",
							r.Reissued, r.Verdicts[LegalWithLoss])
					}
				}
			}
		})
	}
	printSummary(os.Stdout, all, faults, byClient, time.Since(start), dir)
	if *summary != "" {
		writeSummary(t, *summary, all, faults, byClient, time.Since(start))
	}
}

// kinds returns the fault kinds a scenario injects.
func (sc scenario) kinds() []string {
	switch sc.name {
	case "aof":
		return []string{"CLIENT KILL", "server SIGSTOP", "restart with persistence (AOF)"}
	case "nopersist":
		return []string{"restart without persistence", "CLIENT KILL", "server SIGSTOP"}
	case "sentinel":
		return []string{"Sentinel failover (SENTINEL FAILOVER)"}
	case "cluster":
		return []string{"Cluster slot migration"}
	case "lagging":
		return []string{laggingFailover}
	}
	return nil
}

func printSummary(w io.Writer, all []*Result, faults *Faults, byClient map[string]int, took time.Duration, dir string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, "model\thistories\toperations\tunknown outcome\tlegal\tlegal given a loss\tillegal\tundecided\tlate (accepted)\t")
	var ops, hist, illegal int
	for _, r := range all {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d (%d)\t\n", r.Model, r.Histories, r.Ops, r.Unknown,
			r.Verdicts[Legal], r.Verdicts[LegalWithLoss], r.Verdicts[Illegal], r.Verdicts[Undecided], r.Late, r.LateOK)
		ops += r.Ops
		hist += r.Histories
		illegal += r.Verdicts[Illegal]
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "faults:")
	restarts := 0
	for _, k := range faults.Kinds() {
		n := faults.Counts()[k]
		fmt.Fprintf(w, "  %6d  %s\n", n, k)
		if strings.HasPrefix(k, "restart") || strings.HasPrefix(k, "Sentinel") {
			restarts += n
		}
	}
	if lags := faults.Lags(); len(lags) > 0 {
		fmt.Fprintf(w, "lagging promotions: the promoted replica was %d to %d bytes of replication behind the killed primary (%d promotions)\n",
			lags[0], lags[len(lags)-1], len(lags))
	}
	for _, r := range all {
		if r.Model == tokensModel || r.Model == counterTokensModel {
			fmt.Fprintf(w, "%s: %d tokens granted twice\n", r.Model, r.Reissued)
		}
	}
	fmt.Fprint(w, "operations by client:")
	for _, c := range slices.Sorted(maps.Keys(byClient)) {
		fmt.Fprintf(w, " %s %d;", c, byClient[c])
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%d operations in %d histories, %d restarts and failovers, %d illegal, in %v; visualizations of illegal histories: %s\n",
		ops, hist, restarts, illegal, took.Round(time.Second), dir)
}

func writeSummary(t *testing.T, path string, all []*Result, faults *Faults, byClient map[string]int, took time.Duration) {
	slices.SortFunc(all, func(a, b *Result) int { return strings.Compare(a.Model, b.Model) })
	b, err := json.MarshalIndent(map[string]any{"results": all, "faults": faults.Counts(), "lags": faults.Lags(), "clients": byClient, "took": took.String(),
		"at": time.Now().UTC().Format(time.RFC3339)}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// quiet drops go-redis's log lines (a dial refused during every restart).
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
