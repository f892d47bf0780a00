package election

import (
	"context"
	"errors"
	"sync"

	"github.com/redis-primitives/go/fence"
)

// Fencer writes through package fence with its term's epoch, as
// fence.Fencer does, and ends the term the first time a write is refused as
// stale (fence.ErrStale): a newer term has written, so this one leads in
// name only. The term then ends with ReasonFencedOut: fn's context is
// cancelled, the lease is released, the Hook is told.
//
// The refused call still returns its *fence.StaleError; fn must stop on it
// (return, or stop writing) rather than retry. A Fencer is a small value;
// copy it freely. The zero Fencer's writes return fence.ErrNilClient.
type Fencer struct {
	f   fence.Fencer
	end *staleSignal // nil for a Fencer no term watches
}

// staleSignal is closed once, by the first stale refusal of a term.
type staleSignal struct {
	once sync.Once
	ch   chan struct{}
}

func newStaleSignal() *staleSignal { return &staleSignal{ch: make(chan struct{})} }

func (s *staleSignal) fire() { s.once.Do(func() { close(s.ch) }) }

// fired reports whether fire was called.
func (s *staleSignal) fired() bool {
	select {
	case <-s.ch:
		return true
	default:
		return false
	}
}

// Token returns the term's epoch, for fencing a resource that is not Redis
// (see package pgfence). A refusal there does not end the term: return
// from fn, or call Elector.Resign, when it happens.
func (f Fencer) Token() int64 { return f.f.Token() }

// Key returns the name the Store writes under for name (fence.Store.Key).
func (f Fencer) Key(name string) string { return f.f.Key(name) }

// Fence returns the underlying fence.Fencer, for code that takes one. Its
// refusals do not end the term.
func (f Fencer) Fence() fence.Fencer { return f.f }

// Set is fence.Fencer.Set; a stale refusal ends the term.
func (f Fencer) Set(ctx context.Context, key string, value any) error {
	return f.check(f.f.Set(ctx, key, value))
}

// HSet is fence.Fencer.HSet; a stale refusal ends the term.
func (f Fencer) HSet(ctx context.Context, key, field string, value any) error {
	return f.check(f.f.HSet(ctx, key, field, value))
}

// Eval is fence.Fencer.Eval; a stale refusal ends the term.
func (f Fencer) Eval(ctx context.Context, script string, keys []string, args ...any) (any, error) {
	v, err := f.f.Eval(ctx, script, keys, args...)
	return v, f.check(err)
}

func (f Fencer) check(err error) error {
	if f.end != nil && errors.Is(err, fence.ErrStale) {
		f.end.fire()
	}
	return err
}
