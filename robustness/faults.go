package robustness

import (
	"maps"
	"slices"
	"sync"
)

// Faults counts injected faults by kind.
type Faults struct {
	mu   sync.Mutex
	n    map[string]int
	lags []int64
}

// NewFaults returns an empty count.
func NewFaults() *Faults { return &Faults{n: map[string]int{}} }

// Add counts one fault of kind.
func (f *Faults) Add(kind string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n[kind]++
}

// Counts returns the counts by kind.
func (f *Faults) Counts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.n)
}

// Kinds returns the kinds counted, sorted.
func (f *Faults) Kinds() []string {
	return slices.Sorted(maps.Keys(f.Counts()))
}

// Lag records how far behind (bytes of replication) a promoted replica
// was.
func (f *Faults) Lag(behind int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lags = append(f.lags, behind)
}

// Lags returns the recorded lags, sorted.
func (f *Faults) Lags() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(slices.Values(f.lags))
}

// Merge adds g's counts and lags to f.
func (f *Faults) Merge(g *Faults) {
	counts, lags := g.Counts(), g.Lags()
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, v := range counts {
		f.n[k] += v
	}
	f.lags = append(f.lags, lags...)
}
