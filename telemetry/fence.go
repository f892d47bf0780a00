package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/redis-primitives/go/fence"
)

// Attribute keys of fence metrics and spans.
const (
	attrFenceStore     = attribute.Key("fence.store")     // redis or postgresql
	attrFenceOperation = attribute.Key("fence.operation") // set, hset, eval; update, guard
	attrFenceOutcome   = attribute.Key("fence.outcome")   // accepted, stale or error
	attrFenceTable     = attribute.Key("fence.table")     // postgresql: the table compared against
	attrFenceKey       = attribute.Key("fence.key")       // only WithKeys: the key, or the row id
	attrFenceToken     = attribute.Key("fence.token")     // spans: the write's token
	attrFenceHighest   = attribute.Key("fence.highest")   // spans, when stale: the highest token accepted
)

// FenceWrite is one fenced write's verdict, from any store: Fence and
// package pgfencetel build it from their stores' decisions, and a store of
// your own can report through RecordFenceWrite.
type FenceWrite struct {
	Store     string // "redis", "postgresql", or your store's name
	Operation string
	Table     string // optional
	Key       string // recorded only WithKeys
	Token     int64
	Accepted  bool
	Highest   int64         // when refused
	Latency   time.Duration // how long the write took; 0 if unknown
	// Err is the error of a write that failed without a verdict (outcome
	// error); nil for a verdict, accepted or stale.
	Err error
}

// Fence is the hook (fence.WithHook) that records a fence.Store's verdicts,
// as RecordFenceWrite does, with fence.store "redis". A Store has one
// hook: to observe with your own as well, call Fence from it.
func (t *Telemetry) Fence(ctx context.Context, e fence.Event) {
	w := FenceWrite{Store: "redis", Operation: e.Op, Key: e.Key, Token: e.Token,
		Accepted: e.Outcome == "accepted", Highest: e.Highest, Latency: e.Latency}
	if e.Outcome == "error" {
		w.Err = e.Err
	}
	t.RecordFenceWrite(ctx, w)
}

// RecordFenceWrite counts w in fence.writes ({write}) by fence.store,
// fence.operation, fence.outcome (accepted; stale: the refusal that kept a
// stale holder out; error: no verdict, w.Err) and fence.table, records its
// latency in fence.write.duration (s) by the same attributes, and records a
// span "fence.write" under ctx's span, as long as the write took, with the
// tokens (and the error).
func (t *Telemetry) RecordFenceWrite(ctx context.Context, w FenceWrite) {
	t.ready()
	outcome := "accepted"
	switch {
	case w.Err != nil:
		outcome = "error"
	case !w.Accepted:
		outcome = "stale"
	}
	k := fenceKind{store: w.Store, op: w.Operation, table: w.Table, outcome: outcome}
	build := func() *attrs {
		kvs := make([]attribute.KeyValue, 0, 5)
		kvs = append(kvs, attrFenceStore.String(k.store), attrFenceOperation.String(k.op), attrFenceOutcome.String(outcome))
		if k.table != "" {
			kvs = append(kvs, attrFenceTable.String(k.table))
		}
		if t.cfg.keys {
			kvs = append(kvs, attrFenceKey.String(w.Key))
		}
		return newAttrs("fence.write", kvs...)
	}
	var a *attrs
	if t.cfg.keys {
		a = build()
	} else {
		a = t.fenceCache.get(k, build)
	}
	t.fenceWrites.Add(ctx, 1, a.add...)
	t.fenceDuration.Record(ctx, w.Latency.Seconds(), a.record...)
	extra := [2]attribute.KeyValue{attrFenceToken.Int64(w.Token), attrFenceHighest.Int64(w.Highest)}
	n := 1
	if outcome == "stale" {
		n = 2
	}
	t.span(ctx, a.span, w.Latency, w.Err, a.spanAttrs(extra[:n]...))
}

type fenceKind struct {
	store, op, table, outcome string
}
