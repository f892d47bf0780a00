package fence

import "context"

// Fencer is a token bound to a Store: the one value a lock holder or a
// leader passes down to the code that writes for it, so the token travels
// with every write. Make one with Store.Fencer. A Fencer is a small value;
// copy it freely.
//
// The zero Fencer has no Store: its writes return ErrNilClient.
type Fencer struct {
	store *Store
	token int64
}

// Fencer returns a Fencer that writes through s with token. The token is
// checked on each write, so an invalid one fails there with
// ErrInvalidToken.
func (s *Store) Fencer(token int64) Fencer {
	return Fencer{store: s, token: token}
}

// Token returns the fencing token, for fencing a resource that is not Redis
// (see package pgfence).
func (f Fencer) Token() int64 { return f.token }

// Key returns Store.Key(name): the name to write under in the Store's scope.
func (f Fencer) Key(name string) string { return f.store.Key(name) }

// Set is Store.Set with the Fencer's token.
func (f Fencer) Set(ctx context.Context, key string, value any) error {
	return f.store.Set(ctx, f.token, key, value)
}

// HSet is Store.HSet with the Fencer's token.
func (f Fencer) HSet(ctx context.Context, key, field string, value any) error {
	return f.store.HSet(ctx, f.token, key, field, value)
}

// Eval is Store.Eval with the Fencer's token.
func (f Fencer) Eval(ctx context.Context, script string, keys []string, args ...any) (any, error) {
	return f.store.Eval(ctx, f.token, script, keys, args...)
}
