package lock

import (
	"fmt"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/luascripts/leasecore"
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
	cfg    config              // its lease core among them
	batch  *luascripts.Batcher // nil unless WithBatching
	policy luascripts.Policy   // read by WithCounterTokens' acquires
}

// New returns a Locker that uses client. It fails with ErrNilClient for a
// nil client and ErrInvalidOption for a bad option.
func New(client Client, opts ...Option) (*Locker, error) {
	cfg := defaults()
	if err := leasecore.Configure(errs, client, &cfg, opts); err != nil {
		return nil, err
	}
	batch, err := newBatcher(client, cfg.batch)
	if err != nil {
		return nil, err
	}
	l := &Locker{cfg: cfg, batch: batch}
	l.cfg.Client, l.cfg.ExtendScript, l.cfg.ReleaseScript = client, l.extendScript, l.releaseScript
	return l, nil
}

// core is the lease core the Locker stands on; nil for a nil Locker, whose
// calls it refuses with ErrNilClient, as a Locker not made by New's.
func (l *Locker) core() *leasecore.Core[Lease, Event, kind] {
	if l == nil {
		return nil
	}
	return &l.cfg.Core
}

func (kind) Check(lease *Lease) error {
	if lease == nil || lease.value == "" || lease.keys[0] == "" {
		return fmt.Errorf("%w: nil or not returned by Acquire", ErrInvalidLease)
	}
	return nil
}
