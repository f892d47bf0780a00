package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/redis-primitives/go/fence"
)

// Attribute keys of fence metrics and spans.
const (
	AttrFenceStore     = attribute.Key("fence.store")     // redis or postgresql
	AttrFenceOperation = attribute.Key("fence.operation") // set, hset, eval; update, guard
	AttrFenceOutcome   = attribute.Key("fence.outcome")   // accepted or stale
	AttrFenceTable     = attribute.Key("fence.table")     // postgresql: the table compared against
	AttrFenceKey       = attribute.Key("fence.key")       // only WithKeys: the key, or the row id
	AttrFenceToken     = attribute.Key("fence.token")     // spans: the write's token
	AttrFenceHighest   = attribute.Key("fence.highest")   // spans, when stale: the highest token accepted
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
	Highest   int64 // when refused
}

// Fence returns the option that reports a fence.Store's verdicts (see
// RecordFenceWrite). It sets the Store's hook (fence.WithHook): one Store
// has one hook, and an option given after this one replaces it.
func (t *Telemetry) Fence() fence.Option {
	return fence.WithHook(func(ctx context.Context, d fence.Decision) {
		t.RecordFenceWrite(ctx, FenceWrite{Store: "redis", Operation: d.Op, Key: d.Key, Token: d.Token, Accepted: d.Accepted, Highest: d.Highest})
	})
}

// RecordFenceWrite counts w in fence.writes ({write}) by fence.store,
// fence.operation, fence.outcome (accepted, or stale: the refusal that
// kept a stale holder out) and fence.table, and records a span
// "fence.write" under ctx's span with the tokens.
func (t *Telemetry) RecordFenceWrite(ctx context.Context, w FenceWrite) {
	k := fenceKind{store: w.Store, op: w.Operation, table: w.Table, accepted: w.Accepted}
	build := func() *attrs {
		outcome := "accepted"
		if !k.accepted {
			outcome = "stale"
		}
		kvs := make([]attribute.KeyValue, 0, 5)
		kvs = append(kvs, AttrFenceStore.String(k.store), AttrFenceOperation.String(k.op), AttrFenceOutcome.String(outcome))
		if k.table != "" {
			kvs = append(kvs, AttrFenceTable.String(k.table))
		}
		if t.cfg.keys {
			kvs = append(kvs, AttrFenceKey.String(w.Key))
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
	extra := [2]attribute.KeyValue{AttrFenceToken.Int64(w.Token), AttrFenceHighest.Int64(w.Highest)}
	n := 1
	if !w.Accepted {
		n = 2
	}
	t.span(ctx, a.span, 0, nil, a.spanAttrs(extra[:n]...))
}

type fenceKind struct {
	store, op, table string
	accepted         bool
}
