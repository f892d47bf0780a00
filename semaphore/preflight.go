package semaphore

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/redis-primitives/go/internal/luascripts"
)

//go:embed aclcheck.lua
var aclCheckSource string

var aclCheckScript = luascripts.NewReadOnly("semaphore/aclcheck.lua", aclCheckSource)

// Report is what Preflight found in the server's configuration.
type Report struct {
	// Version is the server's redis_version (INFO server).
	Version string
	// Refused lists the commands semaphore needs that the client's ACL user
	// may not run on this Issuer's keys and channels (a semaphore called
	// "preflight" stands for every name).
	Refused []string
	// MaxMemoryPolicy is the server's maxmemory-policy.
	MaxMemoryPolicy string
	// AppendOnly reports whether the append-only file is on.
	AppendOnly bool
	// Save is the RDB snapshot schedule ("" when snapshots are off).
	Save string
	// Problems lists, in words, each way found that the server could refuse
	// a call or lose a semaphore's token counter. Empty means none.
	Problems []string
}

// OK reports whether Preflight found no problem.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// Preflight reads the server's version (INFO), whether the client's ACL
// user may run every command semaphore needs (a script asks
// redis.acl_check_cmd; nothing is written) and the configuration (CONFIG
// GET), and reports in Problems a server older than 7.0, any refused
// command, an allkeys-* maxmemory-policy (it may evict a token counter,
// which has no TTL) and no persistence. Without the counter, tokens still
// go up as far as the servers' clocks agree (see the package doc); with
// it, they go up regardless. It only reports; it never changes the server.
//
// A server or user that refuses CONFIG GET (some managed services), or
// the check's read-only script, is reported in Problems, not as an error,
// as every primitive's Preflight does: check those settings by hand.
func (s *Issuer) Preflight(ctx context.Context) (Report, error) {
	var r Report
	if s == nil || s.client == nil {
		return r, ErrNilClient
	}
	version, scriptsRun, err := luascripts.ServerVersion(ctx, s.client)
	if err != nil {
		return r, netErr(ctx, "preflight", "INFO", err)
	}
	r.Version = version
	if !scriptsRun {
		r.Problems = append(r.Problems, fmt.Sprintf("Redis %s: %v", version, ErrRedisTooOld))
		return r, nil
	}
	keys := s.cfg.keys("preflight")
	refused, err := aclCheckScript.Run(ctx, s.client, keys[:], s.cfg.channel("preflight")).StringSlice()
	if cmd, ok := luascripts.RefusedScript(err); ok {
		// The check itself was refused: the user may not run a read-only
		// script, or not on these keys, and so none of semaphore's either.
		r.Refused = []string{cmd + " " + keys[0]}
		r.Problems = append(r.Problems, fmt.Sprintf("the ACL user may not run semaphore's scripts on %s: %v", keys[0], err))
	} else if err != nil {
		return r, netErr(ctx, "preflight", "ACL", err)
	} else if r.Refused = refused; len(refused) > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("the ACL user may not run %s on %s*", strings.Join(r.Refused, ", "), s.cfg.prefix))
	}
	r.MaxMemoryPolicy, r.AppendOnly, r.Save, err = luascripts.Durability(ctx, s.client)
	if _, refused := luascripts.ReplyMessage(err); refused {
		// CONFIG GET refused (an ACL, a managed service): reported, as
		// every primitive's Preflight does.
		r.Problems = append(r.Problems, fmt.Sprintf(
			"%v: check by hand that no allkeys-* maxmemory-policy can evict token counters and that appendonly is on", err))
		return r, nil
	}
	if err != nil {
		return r, netErr(ctx, "preflight", "config", err)
	}
	if strings.HasPrefix(r.MaxMemoryPolicy, "allkeys-") {
		r.Problems = append(r.Problems, fmt.Sprintf(
			"maxmemory-policy %s may evict token counters, which have no TTL; use noeviction or a volatile-* policy", r.MaxMemoryPolicy))
	}
	if !r.AppendOnly && r.Save == "" {
		r.Problems = append(r.Problems,
			"no persistence (appendonly no, save \"\"): a restart loses every token counter, and tokens then rest on the server's clock alone")
	}
	return r, nil
}
