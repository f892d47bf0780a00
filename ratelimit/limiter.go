package ratelimit

import (
	"fmt"

	"github.com/redis-primitives/go/internal/luascripts"
)

// Client is a Redis client through its adapter module:
// goredisadapter.New(rdb) for go-redis, rueidisadapter.New(rc) for
// rueidis, valkeyadapter.New(vc) for valkey-go.
type Client = luascripts.Client

// A Limiter decides on keys with limits kept in Redis. It holds no state of
// its own but the deny cache (WithDenyCache) and is safe for concurrent
// use; every decision is one script call (decide.go).
type Limiter struct {
	client Client
	cfg    config
	deny   *denyCache          // nil unless WithDenyCache
	batch  *luascripts.Batcher // nil unless WithBatching
}

// New returns a Limiter that keeps its state in the server behind client,
// a Redis client through its adapter: ratelimit.New(goredisadapter.New(rdb))
// for a go-redis client. A nil client is ErrNilClient; a nil or bad option
// ErrInvalidOption.
func New(client Client, opts ...Option) (*Limiter, error) {
	if luascripts.IsNil(client) {
		return nil, ErrNilClient
	}
	l := &Limiter{client: client, cfg: config{prefix: DefaultPrefix}}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: option %d is nil", ErrInvalidOption, i)
		}
		if err := o(&l.cfg); err != nil {
			return nil, err
		}
	}
	if l.cfg.denyCache > 0 {
		l.deny = newDenyCache(l.cfg.denyCache)
	}
	if l.cfg.batch > 0 {
		var err error
		if l.batch, err = newBatcher(client, l.cfg.batch); err != nil {
			return nil, err
		}
	}
	return l, nil
}
