package robustness

import (
	"maps"
	"slices"
	"sync"
)

// Faults counts injected faults by kind.
type Faults struct {
	mu sync.Mutex
	n  map[string]int
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

// Merge adds g's counts to f.
func (f *Faults) Merge(g *Faults) {
	for k, v := range g.Counts() {
		f.mu.Lock()
		f.n[k] += v
		f.mu.Unlock()
	}
}
