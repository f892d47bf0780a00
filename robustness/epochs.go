package robustness

import (
	"fmt"
	"slices"
)

// The election's terms. Each term is one node's leadership, with the epoch
// it was elected with, from its election to its demotion on its own clock.
// Checked: one leader per epoch (no two terms share an epoch), and each
// node's epochs go up. Two terms whose intervals overlap are counted, not
// judged: a node paused past its lease still believes it leads until it
// wakes, as documented; only the epoch refuses its writes, and that is the
// register model's to check (the leaders' writes go through Term.Fencer).

// Term is one recorded term.
type Term struct {
	Node       string
	Epoch      int64
	Start, End int64 // µs; End is pending for a term still running at the end
}

// EpochResult is what the check found in one election.
type EpochResult struct {
	Terms     int
	Illegal   []string // violations of one leader per epoch or epochs up
	Overlaps  int      // pairs of terms that overlapped (classified)
	LateTerms int      // terms whose node was paused past its lease
}

// CheckEpochs checks one election's terms.
func CheckEpochs(terms []Term) EpochResult {
	res := EpochResult{Terms: len(terms)}
	byEpoch := map[int64]string{}
	last := map[string]int64{}
	sorted := slices.Clone(terms)
	slices.SortFunc(sorted, func(a, b Term) int { return int(a.Start - b.Start) })
	for _, t := range sorted {
		if n, ok := byEpoch[t.Epoch]; ok && n != t.Node {
			res.Illegal = append(res.Illegal, fmt.Sprintf("epoch %d led by %s and by %s", t.Epoch, n, t.Node))
		} else if ok {
			res.Illegal = append(res.Illegal, fmt.Sprintf("epoch %d elected twice on %s", t.Epoch, t.Node))
		}
		byEpoch[t.Epoch] = t.Node
		if e, ok := last[t.Node]; ok && t.Epoch <= e {
			res.Illegal = append(res.Illegal, fmt.Sprintf("%s elected with epoch %d after %d", t.Node, t.Epoch, e))
		}
		last[t.Node] = t.Epoch
	}
	for i, a := range sorted {
		for _, b := range sorted[i+1:] {
			if b.Start >= a.End {
				break
			}
			res.Overlaps++
		}
	}
	return res
}
