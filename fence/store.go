package fence

import (
	"fmt"

	"github.com/redis-primitives/go/internal/luascripts"
)

// Client is a Redis client through its adapter module:
// goredisadapter.New(rdb) for go-redis, rueidisadapter.New(rc) for
// rueidis, valkeyadapter.New(vc) for valkey-go. Each adapter is a module
// of its own, so an application downloads only the client it uses.
type Client = luascripts.Client

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
	client  Client
	batcher *luascripts.Batcher // nil unless WithBatching
	policy  luascripts.Policy   // the server's maxmemory-policy, read at the first write
	config
}

// config holds what the options set.
type config struct {
	scope  string // as given to WithScope; "" for a mark per key
	prefix string // what the scope's keys and mark start with
	tag    string // the scope's hash tag
	batch  int    // WithBatching: the largest batch, 0 for none
	observer
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
// name is either a plain name ("billing-run", typically the lock's name)
// or a key prefix with a hash tag ("app:{billing-run}"), which keeps the
// scope's keys and mark under the prefix "app:" an ACL may grant. Every key
// written must carry the scope's hash tag, so it lives in the mark's
// Cluster slot; Store.Key builds such keys, and a write to a key without
// the tag fails with ErrCrossSlot. The package doc gives the names.
//
// name must be non-empty; a name with a brace must have a hash tag.
func WithScope(name string) Option {
	return func(c *config) error {
		if name == "" {
			return fmt.Errorf("%w: empty scope", ErrInvalidOption)
		}
		prefix, err := scopePrefix(name)
		if err != nil {
			return err
		}
		c.scope, c.prefix, c.tag = name, prefix, slotOf(prefix)
		return nil
	}
}

// New returns a Store that writes through client, a Redis client through
// its adapter (fence.New(goredisadapter.New(rdb)) for go-redis; any of
// its clients: one server, a Sentinel-monitored primary, a Cluster, a
// Ring). It makes no round trip. It fails with ErrNilClient for a nil
// client (goredisadapter.New(nil) included) and ErrInvalidOption for a nil
// or bad option.
func New(client Client, opts ...Option) (*Store, error) {
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
	var err error
	if s.batcher, err = newBatcher(client, s.batch); err != nil {
		return nil, err
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
