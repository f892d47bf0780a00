package robustness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Verdicts of one history.
const (
	Legal         = "legal"
	LegalWithLoss = "legal given a documented loss"
	Illegal       = "illegal"
	Undecided     = "undecided (checker timed out)"
)

// Result is what the check found for one model in one or more runs.
type Result struct {
	Model     string
	Histories int
	Ops       int
	Unknown   int // operations of unknown outcome (applied and not)
	Late      int // writes made past the writer's lease (classified)
	LateOK    int // of those, accepted: before any newer holder wrote
	Reissued  int // tokens granted more than once (tokens histories)
	Verdicts  map[string]int
	Problems  []string // one line per illegal history, with its visualization
}

func newResult(model string) *Result { return &Result{Model: model, Verdicts: map[string]int{}} }

// Add adds o's figures to r.
func (r *Result) Add(o *Result) {
	r.Histories += o.Histories
	r.Ops += o.Ops
	r.Unknown += o.Unknown
	r.Late += o.Late
	r.LateOK += o.LateOK
	r.Reissued += o.Reissued
	for k, v := range o.Verdicts {
		r.Verdicts[k] += v
	}
	r.Problems = append(r.Problems, o.Problems...)
}

// Models maps each checked model to porcupine's model of it.
func Models() map[string]porcupine.Model {
	return map[string]porcupine.Model{
		"lock":      Holders(1),
		"semaphore": Holders(semCapacity),
		"fence":     Register(),
		"pgfence":   Register(),
		"election":  Register(),

		tokensModel:        Tokens(),
		counterTokensModel: Tokens(),
	}
}

// checkTimeout bounds the checker on one history; past it the history is
// undecided, and counted as such, never as legal.
const checkTimeout = 60 * time.Second

// lossTimeout bounds the second check of a history illegal without its
// losses: with them it is far more permissive, so a legal linearization
// is found quickly when there is one, and an exhaustive search means
// there is none or the history is too tangled to tell.
var lossTimeout = 20 * time.Second

// Check checks every history of the run. An illegal history's
// visualization is written to visDir.
func (r *Run) Check(visDir string) []*Result {
	var out []*Result
	for _, name := range []string{"lock", tokensModel, counterTokensModel, "fence", "pgfence", "semaphore", "election"} {
		model := Models()[name]
		res := newResult(name)
		parts := r.H.Partitions(name)
		if len(parts) == 0 {
			continue
		}
		for _, part := range parts {
			prepare := func(ops []porcupine.Operation) []porcupine.Operation { return ops }
			if name == "lock" || name == "semaphore" {
				prepare = func(ops []porcupine.Operation) []porcupine.Operation { return early(r.H.withMoves(part, ops)) }
			}
			ops := prepare(r.H.Ops(part, false))
			res.Histories++
			res.Ops += len(ops)
			if name == tokensModel || name == counterTokensModel {
				res.Reissued += reissued(ops)
			}
			for _, op := range ops {
				if isUnknown(op.Output) {
					res.Unknown++
				}
				if w, ok := op.Input.(Write); ok && w.Late {
					res.Late++
					if op.Output == Accepted {
						res.LateOK++
					}
				}
			}
			verdict, info := check(model, ops, checkTimeout)
			// PostgreSQL is not failed over: Redis's losses excuse nothing there.
			if verdict == Illegal && len(r.H.Losses()) > 0 && name != "pgfence" {
				switch v, _ := check(model, prepare(r.H.Ops(part, true)), lossTimeout); v {
				case Legal:
					verdict = LegalWithLoss
				case Undecided:
					verdict = Undecided
				}
			}
			res.Verdicts[verdict]++
			switch verdict {
			case Illegal:
				res.Problems = append(res.Problems, visualize(model, info, visDir, part))
			case Undecided:
				res.Problems = append(res.Problems, part+": undecided: the checker timed out")
			}
		}
		out = append(out, res)
	}
	out = append(out, r.checkEpochs(), r.checkWindows())
	return out
}

func check(model porcupine.Model, ops []porcupine.Operation, timeout time.Duration) (string, porcupine.LinearizationInfo) {
	res, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	switch res {
	case porcupine.Ok:
		return Legal, info
	case porcupine.Illegal:
		return Illegal, info
	}
	return Undecided, info
}

func isUnknown(out any) bool {
	switch o := out.(type) {
	case Outcome:
		return o == Unknown
	case ReadResult:
		return o.Outcome == Unknown
	}
	return false
}

// visualize writes porcupine's HTML of an illegal history and says where.
func visualize(model porcupine.Model, info porcupine.LinearizationInfo, dir, part string) string {
	path := filepath.Join(dir, strings.NewReplacer("/", "_", ":", "_").Replace(part)+".html")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Sprintf("%s: illegal (visualization not written: %v)", part, err)
	}
	if err := porcupine.VisualizePath(model, info, path); err != nil {
		return fmt.Sprintf("%s: illegal (visualization not written: %v)", part, err)
	}
	return fmt.Sprintf("%s: illegal, see %s", part, path)
}

func (r *Run) checkEpochs() *Result {
	res := newResult("election epochs")
	for name, terms := range r.Terms() {
		e := CheckEpochs(terms)
		res.Histories++
		res.Ops += e.Terms
		res.Late += e.Overlaps
		if len(e.Illegal) > 0 {
			res.Verdicts[Illegal]++
			res.Problems = append(res.Problems, fmt.Sprintf("%s/%s: %s", r.W.Scenario, name, strings.Join(e.Illegal, "; ")))
			continue
		}
		res.Verdicts[Legal]++
	}
	return res
}

func (r *Run) checkWindows() *Result {
	res := newResult("ratelimit")
	losses := r.H.Losses()
	for key, ds := range r.Decisions() {
		w := CheckWindow(ds, limitN, limitWindow, losses)
		res.Histories++
		res.Ops += len(ds)
		for _, d := range ds {
			if d.Outcome == Unknown {
				res.Unknown++
			}
		}
		switch {
		case w.Over > 0:
			res.Verdicts[Illegal]++
			res.Problems = append(res.Problems, fmt.Sprintf("ratelimit/%s/%s: illegal: %d windows over the limit, e.g. %s", r.W.Scenario, key, w.Over, w.Example))
		case w.OverLoss > 0:
			res.Verdicts[LegalWithLoss]++
		default:
			res.Verdicts[Legal]++
		}
	}
	return res
}
