package luascripts

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrEvictingPolicy is matched by the error of a call refused because the
// server's maxmemory-policy is allkeys-*: under memory pressure such a
// server evicts keys without a TTL (a fence's high-water marks, counter
// tokens' counters), and a lost one accepts a stale write (ADR 0029). Each
// primitive that refuses re-exports it.
var ErrEvictingPolicy = errors.New("maxmemory-policy may evict keys without a TTL")

// PolicyRecheck is how long a Policy trusts what it read, unless its
// Recheck says otherwise: a CONFIG SET made later is seen within this time.
const PolicyRecheck = 30 * time.Second

// Policy reads and caches a server's maxmemory-policy, from INFO memory
// (which managed services that refuse CONFIG GET still answer), for the
// primitives that must refuse to work on a server that can evict keys
// without a TTL. The zero value is ready to use; it is safe for concurrent
// use.
//
// On a Cluster, INFO reaches one node, which is taken to speak for all.
type Policy struct {
	Recheck time.Duration // 0 for PolicyRecheck

	read atomic.Pointer[policyRead]
	mu   sync.Mutex // held while reading
}

type policyRead struct {
	policy string // "" when the server did not say
	at     time.Time
}

// Check returns an error matching ErrEvictingPolicy when the server's
// policy is allkeys-*, and nil for any other policy, or when the server
// does not say (INFO refused by an ACL, a proxy or a server without the
// field): that case is Preflight's to report. It makes a round trip the
// first time and then at most once per Recheck; meanwhile it reads the
// cache. A network failure of that round trip is returned.
func (p *Policy) Check(ctx context.Context, c Client) error {
	every := p.Recheck
	if every <= 0 {
		every = PolicyRecheck
	}
	r := p.read.Load()
	if r == nil || time.Since(r.at) > every {
		fresh, err := p.refresh(ctx, c, r)
		switch {
		case err == nil:
			r = fresh
		case r == nil:
			return err
		}
		// A failed re-read keeps the last answer; the next call tries again.
	}
	if strings.HasPrefix(r.policy, "allkeys-") {
		return &evictingError{policy: r.policy}
	}
	return nil
}

// refresh reads the policy once for all callers: the first read is waited
// for; a re-read is made by one caller while the others use the last read.
func (p *Policy) refresh(ctx context.Context, c Client, stale *policyRead) (*policyRead, error) {
	if stale != nil {
		if !p.mu.TryLock() {
			return stale, nil
		}
	} else {
		p.mu.Lock()
	}
	defer p.mu.Unlock()
	if r := p.read.Load(); r != nil && r != stale {
		return r, nil // another goroutine read it meanwhile
	}
	info, err := c.Info(ctx, "memory")
	if _, refused := ReplyMessage(err); err != nil && !refused {
		return nil, err
	}
	r := &policyRead{at: time.Now()}
	if err == nil {
		r.policy = infoField(info, "maxmemory_policy")
	}
	p.read.Store(r)
	return r, nil
}

// infoField returns the value of field in an INFO reply, "" when absent.
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

type evictingError struct{ policy string }

func (e *evictingError) Error() string {
	return "maxmemory-policy " + e.policy + " may evict keys without a TTL; use noeviction or a volatile-* policy"
}

func (e *evictingError) Is(target error) bool { return target == ErrEvictingPolicy }
