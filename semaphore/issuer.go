package semaphore

import (
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// Client is a Redis client through its adapter module:
// goredisadapter.New(rdb) for go-redis, rueidisadapter.New(rc) for
// rueidis, valkeyadapter.New(vc) for valkey-go. Each adapter is a module
// of its own, so an application downloads only the client it uses. An
// Issuer runs its scripts on it, subscribes with it for AcquireWait, and
// reads INFO and CONFIG GET with it for Preflight.
type Client = luascripts.Client

// Issuer grants and manages permits of named semaphores on one Redis
// server, under the key layout of the package doc. It is safe for
// concurrent use; make one per client and share it.
type Issuer struct {
	client Client
	cfg    config
}

// New returns an Issuer that uses client. It fails with ErrNilClient for a
// nil client and ErrInvalidOption for a bad option.
func New(client Client, opts ...Option) (*Issuer, error) {
	if luascripts.IsNil(client) {
		return nil, ErrNilClient
	}
	cfg := defaults()
	for _, opt := range opts {
		if opt == nil {
			return nil, badOption("nil option")
		}
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	return &Issuer{client: client, cfg: cfg}, nil
}

// checkCall rejects, without a round trip, what no script could serve, and
// truncates ttl to the whole milliseconds Redis keeps.
func checkCall(name string, capacity int, ttl time.Duration) (time.Duration, error) {
	if err := checkName(name); err != nil {
		return 0, err
	}
	if capacity < 1 {
		return 0, fmt.Errorf("%w: %d (want ≥ 1)", ErrInvalidCapacity, capacity)
	}
	if ttl < time.Millisecond {
		return 0, fmt.Errorf("%w: %v (want ≥ 1ms)", ErrInvalidTTL, ttl)
	}
	return ttl.Truncate(time.Millisecond), nil
}

func checkPermit(p *Permit) error {
	if p == nil || p.ID == "" || p.keys[0] == "" {
		return fmt.Errorf("%w: nil or not returned by Acquire", ErrInvalidPermit)
	}
	return nil
}

// serverTime reads a script's µs timestamp.
func serverTime(us int64) time.Time { return time.UnixMicro(us) }
