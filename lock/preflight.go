package lock

import (
	"context"
	"fmt"
	"strings"
)

// Report is what Preflight found in the server's configuration.
type Report struct {
	// MaxMemoryPolicy is the server's maxmemory-policy.
	MaxMemoryPolicy string
	// AppendOnly reports whether the append-only file is on.
	AppendOnly bool
	// Save is the RDB snapshot schedule ("" when snapshots are off).
	Save string
	// Problems lists, in words, every way the server could lose a fencing
	// counter and so reissue tokens. Empty means none was found.
	Problems []string
}

// OK reports whether Preflight found no problem.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// Preflight reads the server's configuration (CONFIG GET) and reports what
// could make it lose a fencing counter: an allkeys-* maxmemory-policy, which
// may evict the counter (the volatile-* policies evict only keys with a TTL,
// and the counter has none), or no persistence, which loses every counter
// on a restart. RDB snapshots alone still lose the counters' increments
// since the last snapshot. It only reports; it never changes the server.
// Call it at start-up and refuse to start, or warn, as you see fit.
//
// Servers that disable CONFIG (some managed services) make it return an
// error; check their settings by hand.
func (l *Locker) Preflight(ctx context.Context) (Report, error) {
	var r Report
	cfg := map[string]string{}
	for _, p := range []string{"maxmemory-policy", "appendonly", "save"} {
		m, err := l.client.ConfigGet(ctx, p).Result()
		if err != nil {
			return r, wrap(ctx, "preflight", p, err)
		}
		v, ok := m[p]
		if !ok {
			return r, fmt.Errorf("lock: preflight: the server did not report %q", p)
		}
		cfg[p] = v
	}
	r.MaxMemoryPolicy = cfg["maxmemory-policy"]
	r.AppendOnly = cfg["appendonly"] == "yes"
	r.Save = strings.TrimSpace(cfg["save"])

	if strings.HasPrefix(r.MaxMemoryPolicy, "allkeys-") {
		r.Problems = append(r.Problems, fmt.Sprintf(
			"maxmemory-policy %s may evict fencing counters, which have no TTL; use noeviction or a volatile-* policy", r.MaxMemoryPolicy))
	}
	switch {
	case !r.AppendOnly && r.Save == "":
		r.Problems = append(r.Problems,
			"no persistence (appendonly no, save \"\"): a restart loses every fencing counter and reissues tokens")
	case !r.AppendOnly:
		r.Problems = append(r.Problems, fmt.Sprintf(
			"RDB snapshots only (save %q): a restart loses the tokens issued since the last snapshot; enable appendonly", r.Save))
	}
	return r, nil
}
