package ratelimit

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

//go:embed aclcheck.lua
var aclCheckSource string

// aclCheckScript is aclcheck.lua, run by Preflight.
var aclCheckScript = func() *luascripts.Script {
	s := luascripts.NewReadOnly("aclcheck.lua", aclCheckSource)
	allScripts = append(allScripts, s)
	return s
}()

// Report is what Preflight found.
type Report struct {
	// Version is the server's redis_version (INFO server).
	Version string
	// Refused lists the commands ratelimit needs that the client's ACL user
	// may not run, each with the key under the Limiter's prefix it was
	// checked on ("ZADD ratelimit:{preflight}:l1:1s", or a bare "TIME").
	// When the user may not run Preflight's own read-only script on that
	// key (EVALSHA_RO or EVAL_RO refused, or the prefix outside the user's
	// patterns), the entry is "EVALSHA_RO <key>" (or "EVAL_RO <key>"): no
	// decision would run either.
	Refused []string
	// Problems lists, in words, a server older than 7.0 and the refused
	// commands. Empty means none was found.
	Problems []string
}

// OK reports whether Preflight found no problem.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// Preflight is a start-up check. It reads the server's version (INFO) and
// whether the client's ACL user may run every command ratelimit needs on
// the Limiter's keys (a read-only script asks redis.acl_check_cmd, on a
// key under the prefix; nothing is written), and reports in Problems a
// server older than 7.0 (ErrRedisTooOld) and any refused command. It only
// reports; it never changes the server.
//
// It does not look at eviction or persistence: a limit whose key is
// evicted or lost in a restart forgets only recent requests (see "Not
// guaranteed" in the package documentation), so no maxmemory-policy is a
// problem here, and it needs no CONFIG GET. A server without EVALSHA_RO
// (older than 7.0) makes it return an error matching ErrRedisTooOld.
func (l *Limiter) Preflight(ctx context.Context) (Report, error) {
	var r Report
	if l == nil || l.client == nil {
		return r, ErrNilClient
	}
	version, scriptsRun, err := luascripts.ServerVersion(ctx, l.client)
	if err != nil {
		return r, luascripts.CallError(ctx, "ratelimit: preflight: INFO", err)
	}
	r.Version = version
	if !scriptsRun {
		r.Problems = append(r.Problems, fmt.Sprintf("Redis %s: %v", r.Version, ErrRedisTooOld))
		return r, nil
	}
	// A key as a limit of the Limiter would name it (package doc, "Keys").
	key := base(l.cfg.prefix, "preflight") + limitID(AlgorithmSlidingLog, 1, time.Second, 0)
	refused, err := aclCheckScript.Run(ctx, l.client, []string{key}).StringSlice()
	if cmd, ok := luascripts.RefusedScript(err); ok {
		r.Refused = []string{cmd + " " + key}
		r.Problems = append(r.Problems, fmt.Sprintf("the ACL user may not run ratelimit's scripts on %s: %v", key, err))
		return r, nil
	}
	if err != nil {
		return r, luascripts.CallError(ctx, "ratelimit: preflight: ACL", err)
	}
	r.Refused = refused
	if len(refused) > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("the ACL user may not run %s", strings.Join(refused, ", ")))
	}
	return r, nil
}
