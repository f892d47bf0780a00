package fence

import (
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/luascripts"
)

// Store writes to Redis keys under a fence: each write carries a token and
// is refused if the token is lower than the highest one accepted for the
// key's high-water mark. It is safe for concurrent use; make one per client
// and scope and share it.
//
// By default every key has a mark of its own. A Store made WithScope keeps
// one mark for all the keys of a scope, so a holder that wrote any of them
// fences older holders out of all of them (see WithScope). The package doc
// gives the names of the marks.
//
// Every writer of a key must use the same scope and tokens from the same
// counter (one lock name): marks of different scopes, or tokens of
// different locks, do not compare.
type Store struct {
	client redis.Scripter
	config
}

// config holds what the options set.
type config struct {
	scope string // "" for a mark per key
}

// Option changes a Store's defaults. New applies the options in order and
// fails on the first that returns an error.
type Option func(*config) error

// WithScope makes one high-water mark guard every key of the Store,
// instead of one mark per key. Use it when one lock protects several keys:
// once the newer holder has written any of them, an older holder is
// refused on all of them, including keys the newer holder has not written
// yet. With a mark per key, that older holder could still write the keys
// the newer one has not touched.
//
// Every key written must carry the hash tag {name}, so it lives in the
// mark's Cluster slot; Store.Key builds such keys, and a write to a key
// without the tag fails with ErrCrossSlot. A natural name is the lock's
// name. It must be non-empty and contain no '{' or '}'.
func WithScope(name string) Option {
	return func(c *config) error {
		if name == "" || strings.ContainsAny(name, "{}") {
			return fmt.Errorf("%w: scope %q must be non-empty and contain no braces", ErrInvalidOption, name)
		}
		c.scope = name
		return nil
	}
}

// New returns a Store that writes through client (a *redis.Client,
// *redis.ClusterClient, *redis.Ring or any redis.UniversalClient). It makes
// no round trip. It fails with ErrNilClient for a nil client and
// ErrInvalidOption for a nil or bad option.
func New(client redis.Scripter, opts ...Option) (*Store, error) {
	if luascripts.IsNil(client) {
		return nil, ErrNilClient
	}
	s := &Store{client: client}
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: nil option", ErrInvalidOption)
		}
		if err := opt(&s.config); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Scope returns the name given to WithScope, or "" for a mark per key.
func (s *Store) Scope() string {
	if s == nil {
		return ""
	}
	return s.scope
}
