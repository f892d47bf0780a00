package bench

import (
	"fmt"
	"io"
	"time"
)

// Config says how long and how hard to measure.
type Config struct {
	// Duration is how long each contender runs in each round.
	Duration time.Duration
	// Warmup is how long each contender runs once, unrecorded, before the
	// first round: it opens the client's connections and loads its scripts.
	Warmup time.Duration
	// Goroutines is how many goroutines call a library at once (and how
	// many clients redis-benchmark opens for the limit).
	Goroutines int
	// Rounds is how many times every case runs; rows report the median.
	Rounds int
	// Keys is the size of the "many keys" key space (10,000 in the issue).
	Keys int
	// MemoryKeys is how many keys the memory measurement fills (1,000).
	MemoryKeys int
	// Trials is how many handovers and failovers the election measures.
	Trials int
	// Prefix starts every key the run writes, so a run can share a server
	// (the test's fixture may be one). It counts in the memory per key, so
	// keep it short; cmd/bench, on a server of its own, leaves it empty.
	Prefix string
	// Log receives one line per step, for a person watching; nil is quiet.
	Log io.Writer
}

// DefaultConfig is what `make bench` runs: about four minutes on two
// cores.
func DefaultConfig() Config {
	return Config{
		Duration:   2 * time.Second,
		Warmup:     300 * time.Millisecond,
		Goroutines: 50,
		Rounds:     3,
		Keys:       10_000,
		MemoryKeys: 1_000,
		Trials:     10,
	}
}

// QuickConfig is a smoke run of a few seconds: every case, every row, and
// figures too rough to quote.
func QuickConfig() Config {
	return Config{
		Duration:   150 * time.Millisecond,
		Warmup:     30 * time.Millisecond,
		Goroutines: 8,
		Rounds:     2,
		Keys:       200,
		MemoryKeys: 20,
		Trials:     2,
	}
}

func (c Config) validate() error {
	switch {
	case c.Duration <= 0:
		return fmt.Errorf("bench: duration %v must be positive", c.Duration)
	case c.Warmup < 0:
		return fmt.Errorf("bench: warm-up %v must not be negative", c.Warmup)
	case c.Goroutines < 1:
		return fmt.Errorf("bench: goroutines %d must be at least 1", c.Goroutines)
	case c.Rounds < 1:
		return fmt.Errorf("bench: rounds %d must be at least 1", c.Rounds)
	case c.Keys < c.Goroutines:
		return fmt.Errorf("bench: keys %d must be at least the goroutines (%d), so each has keys of its own", c.Keys, c.Goroutines)
	case c.MemoryKeys < 1:
		return fmt.Errorf("bench: memory keys %d must be at least 1", c.MemoryKeys)
	case c.Trials < 1:
		return fmt.Errorf("bench: election trials %d must be at least 1", c.Trials)
	}
	return nil
}

func (c Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", args...)
	}
}

// keyOf picks the key goroutine g uses on its i-th operation among n keys:
// each goroutine cycles through a block of its own, so no two goroutines
// ever touch the same key (an uncontended lock stays uncontended).
func keyOf(g, i, goroutines, n int) int {
	per := n / goroutines
	return g*per + i%per
}
