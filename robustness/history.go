package robustness

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// History collects the operations of one run, partitioned by key: each
// partition is a history checked on its own.
type History struct {
	mu      sync.Mutex
	parts   map[string][]porcupine.Operation
	model   map[string]string // partition -> model name
	losses  []Loss
	stops   []Loss // spans in which a server was stopped (SIGSTOP)
	moves   []Loss // spans of Cluster slot migrations, Kind the name moved
	clients int
}

// Loss is a fault that may have lost acknowledged state, between Start and
// End (µs): a restart without persistence, a failover.
type Loss struct {
	Kind       string
	Start, End int64
}

// lossInput is the operation a Loss becomes in every partition; End is
// when the fault ended (µs).
type lossInput struct {
	Kind string
	End  int64
}

// NewHistory returns an empty history.
func NewHistory() *History {
	return &History{parts: map[string][]porcupine.Operation{}, model: map[string]string{}}
}

// Client returns a new client id. A worker takes a new one after an
// operation of unknown outcome, which stays pending to the end of the run.
func (h *History) Client() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clients++
	return h.clients
}

// now is the wall clock in µs: the clock the servers on this host read.
func now() int64 { return time.Now().UnixMicro() }

// pending marks the Return of an operation of unknown outcome until Ops
// replaces it with the end of the history.
const pending = math.MaxInt64

// Add records one operation in partition part, checked by model. An unknown
// outcome has ret == pending.
func (h *History) Add(model, part string, client int, in any, call, ret int64, out any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.model[part] = model
	h.parts[part] = append(h.parts[part], porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
}

// AddLoss records a fault that may have lost acknowledged state.
func (h *History) AddLoss(kind string, start, end int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.losses = append(h.losses, Loss{Kind: kind, Start: start, End: end})
}

// AddStop records a span in which a server was stopped: a command it had
// read before runs when it resumes, which may be after its caller gave up.
func (h *History) AddStop(start, end int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stops = append(h.stops, Loss{Kind: "stop", Start: start, End: end})
}

// AddMove records the span of a Cluster slot migration of name's keys:
// MIGRATE gives a key moved its remaining TTL anew on the importing node, so
// a lease moved meanwhile may outlive its TTL by up to the span.
func (h *History) AddMove(name string, start, end int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.moves = append(h.moves, Loss{Kind: name, Start: start, End: end})
}

// withMoves adds to partition part's ops the migrations of its name's
// slot, as operations of client 0 (holders.go's moveInput).
func (h *History) withMoves(part string, ops []porcupine.Operation) []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.moves {
		if strings.HasSuffix(part, "/"+m.Kind) {
			ops = append(ops, porcupine.Operation{ClientId: 0, Input: moveInput{m.Start, m.End}, Call: m.Start, Return: m.End})
		}
	}
	return ops
}

// Losses returns the recorded losses.
func (h *History) Losses() []Loss {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Loss(nil), h.losses...)
}

// Partitions returns the partitions of model, sorted by name.
func (h *History) Partitions(model string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var names []string
	for p, m := range h.model {
		if m == model {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	return names
}

// Ops returns partition part's operations, with the losses as operations
// of client 0 when withLosses, and every pending Return moved to the last
// instant its operation could take effect (unknownBound), or to just after
// the last timestamp of the partition if that comes first.
func (h *History) Ops(part string, withLosses bool) []porcupine.Operation {
	h.mu.Lock()
	ops := append([]porcupine.Operation(nil), h.parts[part]...)
	if withLosses {
		for _, l := range h.losses {
			ops = append(ops, porcupine.Operation{ClientId: 0, Input: lossInput{l.Kind, l.End}, Call: l.Start, Output: nil, Return: l.End})
		}
	}
	stops := slices.Clone(h.stops)
	h.mu.Unlock()
	slices.SortFunc(stops, func(a, b Loss) int { return cmp.Compare(a.Start, b.Start) })
	var last int64
	for _, op := range ops {
		last = max(last, op.Call)
		if op.Return != pending {
			last = max(last, op.Return)
		}
	}
	for i := range ops {
		if ops[i].Return == pending {
			ops[i].Return = min(unknownBound(ops[i].Call, stops), last+1)
			ops[i].Input = withReturn(ops[i].Input, ops[i].Return)
		}
	}
	return ops
}

// unknownSlack is how long after its deadline a call the client still
// held may yet be written and run: a client waiting for a connection to be
// dialled, or a busy server reading it late. A second is far more than any
// of the clients took to write a call once its connection was up.
const unknownSlack = time.Second

// unknownBound is the last instant a call of unknown outcome made at call
// could take effect. Nothing sends it after its deadline (callTimeout), and
// a running server runs what it has read at once; a stopped one runs it
// when it resumes, so a stop the call overlapped extends the bound to its
// end. Holding an unknown outcome pending to the end of the history instead
// keeps every such call concurrent with everything after it, which after a
// failover (a timeout per client every callTimeout while no primary
// answers) made the search exponential. A bound too short can only make
// the checker stricter (a history reported illegal that was not), never
// hide an illegal one. The stops are sorted by start.
func unknownBound(call int64, stops []Loss) int64 {
	bound := call + (callTimeout + unknownSlack).Microseconds()
	for _, s := range stops {
		if s.Start <= bound && s.End >= call {
			bound = max(bound, s.End+unknownSlack.Microseconds())
		}
	}
	return bound
}

// withReturn sets the Return an input repeats for its model.
func withReturn(in any, ret int64) any {
	switch x := in.(type) {
	case Acquire:
		x.Return = ret
		return x
	case Release:
		x.Return = ret
		return x
	}
	return in
}

// Count returns the number of operations recorded for model.
func (h *History) Count(model string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for p, m := range h.model {
		if m == model {
			n += len(h.parts[p])
		}
	}
	return n
}
