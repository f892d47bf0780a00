package lock

import (
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// Client is a Redis client through its adapter module:
// goredisadapter.New(rdb) for go-redis, rueidisadapter.New(rc) for
// rueidis, valkeyadapter.New(vc) for valkey-go. A Locker runs its scripts
// on it, subscribes with it for AcquireWait, sends WithReplicas' WAIT on
// the connection of its script with it, and reads INFO, CONFIG GET and
// TIME with it for Preflight and CheckReplicaClocks.
type Client = luascripts.Client

// Locker takes and manages locks on one Redis server, under the key layout
// of the package doc. It is safe for concurrent use; make one per client
// and share it.
type Locker struct {
	client Client
	cfg    config
	batch  *luascripts.Batcher // nil unless WithBatching
}

// New returns a Locker that uses client. It fails with ErrNilClient for a
// nil client and ErrInvalidOption for a bad option.
func New(client Client, opts ...Option) (*Locker, error) {
	if luascripts.IsNil(client) {
		return nil, ErrNilClient
	}
	cfg := defaults()
	for _, opt := range opts {
		if opt == nil {
			return nil, invalid("nil option")
		}
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	batch, err := newBatcher(client, cfg.batch)
	if err != nil {
		return nil, err
	}
	return &Locker{client: client, cfg: cfg, batch: batch}, nil
}

// checkTTL rejects what Redis cannot express, and a TTL that leaves no time
// once the safety margin is taken off (the lease's deadline would be no
// later than its request), and truncates to whole milliseconds, so the
// lease never claims more time than the server gives.
func (l *Locker) checkTTL(ttl time.Duration) (time.Duration, error) {
	if ttl < time.Millisecond {
		return 0, fmt.Errorf("%w: %v (want ≥ 1ms)", ErrInvalidTTL, ttl)
	}
	ttl = ttl.Truncate(time.Millisecond)
	if margin := l.cfg.marginFor(ttl); ttl <= margin {
		return 0, fmt.Errorf("%w: %v leaves no time once the safety margin %v is taken off", ErrInvalidTTL, ttl, margin)
	}
	return ttl, nil
}

func checkLease(lease *Lease) error {
	if lease == nil || lease.value == "" || lease.keys[0] == "" {
		return fmt.Errorf("%w: nil or not returned by Acquire", ErrInvalidLease)
	}
	return nil
}
