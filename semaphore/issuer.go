package semaphore

import (
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

// Client is a Redis client through its adapter module, as lock.Client
// (goredisadapter.New(rdb) for go-redis). An Issuer runs its scripts,
// AcquireWait's subscription and Preflight's reads on it.
type Client = luascripts.Client

// Issuer grants and manages permits of named semaphores on one Redis
// server, under the key layout of the package doc. It is safe for
// concurrent use; make one per client and share it.
type Issuer struct {
	cfg config // its lease core among them
}

// New returns an Issuer that uses client. It fails with ErrNilClient for a
// nil client and ErrInvalidOption for a bad option.
func New(client Client, opts ...Option) (*Issuer, error) {
	s := &Issuer{cfg: defaults()}
	if err := leasecore.Configure(errs, client, &s.cfg, opts); err != nil {
		return nil, err
	}
	s.cfg.Client, s.cfg.ExtendScript, s.cfg.ReleaseScript = client, s.extendScript, s.releaseScript
	return s, nil
}

// core is the lease core the Issuer stands on; nil for a nil Issuer, whose
// calls it refuses with ErrNilClient.
func (s *Issuer) core() *leasecore.Core[Permit, Event, kind] {
	if s == nil {
		return nil
	}
	return &s.cfg.Core
}

func (kind) Check(p *Permit) error {
	if p == nil || p.ID == "" || p.keys[0] == "" {
		return fmt.Errorf("%w: nil or not returned by Acquire", ErrInvalidPermit)
	}
	return nil
}

// serverTime reads a script's µs timestamp.
func serverTime(us int64) time.Time { return time.UnixMicro(us) }
