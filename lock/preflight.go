package lock

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/redis-primitives/go/internal/luascripts"
)

//go:embed aclcheck.lua
var aclCheckSource string

var aclCheckScript = luascripts.NewReadOnly("lock/aclcheck.lua", aclCheckSource)

// Report is what Preflight found in the server's configuration.
type Report struct {
	// Version is the server's redis_version (INFO server).
	Version string
	// Refused lists the commands lock needs that the client's ACL user may
	// not run on this Locker's keys and channels (a name "preflight" under
	// the prefix stands for every name).
	Refused []string
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

// Preflight reads the server's version (INFO), whether the client's ACL
// user may run every command lock needs (a script asks redis.acl_check_cmd;
// nothing is written), and the configuration (CONFIG GET), and reports in
// Problems a server older than 7.0, any refused command, and what could
// make it lose a fencing counter: an allkeys-* maxmemory-policy, which
// may evict the counter (the volatile-* policies evict only keys with a TTL,
// and the counter has none), or no persistence, which loses every counter
// on a restart. RDB snapshots alone still lose the counters' increments
// since the last snapshot. It only reports; it never changes the server.
// Call it at start-up and refuse to start, or warn, as you see fit.
//
// A server or user that refuses CONFIG GET (some managed services), or
// the check's read-only script, is reported in Problems, not as an error,
// as every primitive's Preflight does: check those settings by hand.
func (l *Locker) Preflight(ctx context.Context) (Report, error) {
	var r Report
	if l == nil || l.client == nil {
		return r, ErrNilClient
	}
	version, scriptsRun, err := luascripts.ServerVersion(ctx, l.client)
	if err != nil {
		return r, wrap(ctx, "preflight", "INFO", err)
	}
	r.Version = version
	if !scriptsRun {
		r.Problems = append(r.Problems, fmt.Sprintf("Redis %s: %v", r.Version, ErrRedisTooOld))
		return r, nil
	}
	key := l.cfg.lockKey("preflight")
	mode := "t"
	if l.cfg.counterTokens {
		mode = ""
	}
	refused, err := aclCheckScript.Run(ctx, l.client, []string{key, counterKey(key)}, key+channelSuffix, mode).StringSlice()
	if cmd, ok := luascripts.RefusedScript(err); ok {
		// The check itself was refused: the user may not run a read-only
		// script, or not on these keys, and so none of lock's either.
		r.Refused = []string{cmd + " " + key}
		r.Problems = append(r.Problems, fmt.Sprintf("the ACL user may not run lock's scripts on %s: %v", key, err))
	} else if err != nil {
		return r, wrap(ctx, "preflight", "ACL", err)
	} else if r.Refused = refused; len(refused) > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("the ACL user may not run %s on %s*", strings.Join(refused, ", "), l.cfg.prefix))
	}
	r.MaxMemoryPolicy, r.AppendOnly, r.Save, err = luascripts.Durability(ctx, l.client)
	if _, refused := luascripts.ReplyMessage(err); refused {
		// CONFIG GET refused (an ACL, a managed service): reported, as
		// fence's and semaphore's Preflight do.
		r.Problems = append(r.Problems, fmt.Sprintf(
			"%v: check by hand that no allkeys-* maxmemory-policy can evict fencing counters and that appendonly is on", err))
		return r, nil
	}
	if err != nil {
		return r, wrap(ctx, "preflight", "config", err)
	}

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
