package robustness

import (
	"math"
	"sort"
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
	clients int
}

// Loss is a fault that may have lost acknowledged state, between Start and
// End (µs): a restart without persistence, a failover.
type Loss struct {
	Kind       string
	Start, End int64
}

// lossInput is the operation a Loss becomes in every partition.
type lossInput struct{ Kind string }

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
// of client 0 when withLosses, and every pending Return moved to just after
// the last timestamp of the partition: an unknown outcome may take effect at
// any point after its call, or not at all.
func (h *History) Ops(part string, withLosses bool) []porcupine.Operation {
	h.mu.Lock()
	ops := append([]porcupine.Operation(nil), h.parts[part]...)
	if withLosses {
		for _, l := range h.losses {
			ops = append(ops, porcupine.Operation{ClientId: 0, Input: lossInput{l.Kind}, Call: l.Start, Output: nil, Return: l.End})
		}
	}
	h.mu.Unlock()
	var last int64
	for _, op := range ops {
		last = max(last, op.Call)
		if op.Return != pending {
			last = max(last, op.Return)
		}
	}
	for i := range ops {
		if ops[i].Return == pending {
			ops[i].Return = last + 1
		}
	}
	return ops
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
