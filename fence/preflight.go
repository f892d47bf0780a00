package fence

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/redis-primitives/go/internal/luascripts"
)

//go:embed aclcheck.lua
var aclCheckSource string

// aclCheckScript is aclcheck.lua, run by Preflight.
var aclCheckScript = luascripts.NewReadOnly("aclcheck.lua", aclCheckSource)

// preflightKey is the key Preflight checks when it is given none.
const preflightKey = "preflight"

// Report is what Preflight found in the server's configuration.
type Report struct {
	// Version is the server's redis_version (INFO server).
	Version string
	// Refused lists the commands fence needs that the client's ACL user may
	// not run, each with the key it was checked on ("SET app:x",
	// "GET app:x:fence{app:x}", or a bare "EVALSHA"). When the user may not
	// run Preflight's own read-only script on a key (EVALSHA_RO or EVAL_RO
	// refused, or the key outside the user's patterns), that key's entry
	// is "EVALSHA_RO app:x" (or "EVAL_RO app:x"): no fenced call on it
	// would run either.
	Refused []string
	// MaxMemoryPolicy is the server's maxmemory-policy ("" when CONFIG GET
	// was refused).
	MaxMemoryPolicy string
	// AppendOnly reports whether the append-only file is on.
	AppendOnly bool
	// Save is the RDB snapshot schedule ("" when snapshots are off).
	Save string
	// Problems lists, in words, every way the server could refuse fence's
	// commands or lose a high-water mark, and so accept a stale write.
	// Empty means none was found.
	Problems []string
}

// OK reports whether Preflight found no problem.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// Preflight is a start-up check. It reads the server's version (INFO),
// whether the client's ACL user may run every command fence needs on each
// of keys and its high-water mark (a read-only script asks
// redis.acl_check_cmd; nothing is written), and the configuration (CONFIG
// GET), and reports in Problems a server older than 7.0 (ErrRedisTooOld),
// any refused command, and what could lose a mark, after which a stale
// write is accepted: an allkeys-* maxmemory-policy, which may evict a mark
// (the volatile-* policies evict only keys with a TTL, and marks have
// none), or no persistence, which loses every mark on a restart. RDB
// snapshots alone still lose the marks raised since the last snapshot. It
// only reports; it never changes the server. Call it at start-up and
// refuse to start, or warn, as you see fit.
//
// Give keys like the ones the application writes ("app:x") when the ACL
// grants a key pattern ("~app:*"): each must be a key a write would accept
// (ErrInvalidKey, ErrCrossSlot otherwise). With none, it checks
// Store.Key("preflight"), which in a scoped Store is under the scope's
// prefix, and otherwise is the key "preflight", which such a pattern does
// not cover.
//
// A server that refuses CONFIG GET (some managed services) is reported in
// Problems, not as an error: check its eviction policy and persistence by
// hand. A server without EVALSHA_RO (older than 7.0) makes it return an
// error matching ErrRedisTooOld.
func (s *Store) Preflight(ctx context.Context, keys ...string) (Report, error) {
	var r Report
	if s == nil || s.client == nil {
		return r, ErrNilClient
	}
	if len(keys) == 0 {
		keys = []string{s.Key(preflightKey)}
	}
	marks := make([]string, len(keys))
	for i, k := range keys {
		m, err := s.markFor(k)
		if err != nil {
			return r, err
		}
		marks[i] = m
	}

	version, scriptsRun, err := luascripts.ServerVersion(ctx, s.client)
	if err != nil {
		return r, preflightError(ctx, "INFO", err)
	}
	r.Version = version
	if !scriptsRun {
		r.Problems = append(r.Problems, fmt.Sprintf("Redis %s: %v", r.Version, ErrRedisTooOld))
		return r, nil
	}

	var checked []string // refused by the script's checks, not the script itself
	for i, k := range keys {
		refused, err := aclCheckScript.Run(ctx, s.client, []string{k, marks[i]}).StringSlice()
		if cmd, ok := luascripts.RefusedScript(err); ok {
			// The check itself was refused: the user may not run a
			// read-only script, or not on these keys, and so no fenced
			// call on them either.
			refused = []string{cmd + " " + k}
			r.Problems = append(r.Problems, fmt.Sprintf("the ACL user may not run fence's scripts on %s and its mark %s: %v", k, marks[i], err))
		} else if err != nil {
			return r, preflightError(ctx, "ACL", err)
		}
		for _, c := range refused {
			if !slices.Contains(r.Refused, c) {
				r.Refused = append(r.Refused, c)
				if err == nil {
					checked = append(checked, c)
				}
			}
		}
	}
	if len(checked) > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("the ACL user may not run %s", strings.Join(checked, ", ")))
	}

	r.MaxMemoryPolicy, r.AppendOnly, r.Save, err = luascripts.Durability(ctx, s.client)
	if _, refused := luascripts.ReplyMessage(err); refused {
		r.Problems = append(r.Problems, fmt.Sprintf(
			"%v: check by hand that no allkeys-* maxmemory-policy can evict high-water marks and that appendonly is on", err))
		return r, nil
	}
	if err != nil {
		return r, preflightError(ctx, "config", err)
	}

	if strings.HasPrefix(r.MaxMemoryPolicy, "allkeys-") {
		r.Problems = append(r.Problems, fmt.Sprintf(
			"maxmemory-policy %s may evict high-water marks, which have no TTL, and a lost mark accepts a stale write; use noeviction or a volatile-* policy", r.MaxMemoryPolicy))
	}
	switch {
	case !r.AppendOnly && r.Save == "":
		r.Problems = append(r.Problems,
			"no persistence (appendonly no, save \"\"): a restart loses every high-water mark and then accepts stale writes")
	case !r.AppendOnly:
		r.Problems = append(r.Problems, fmt.Sprintf(
			"RDB snapshots only (save %q): a restart loses the marks raised since the last snapshot and accepts stale writes below them; enable appendonly", r.Save))
	}
	return r, nil
}

// preflightError wraps a failed call of Preflight, joining ctx's error
// when the context ended.
func preflightError(ctx context.Context, what string, err error) error {
	return luascripts.CallError(ctx, "fence: preflight: "+what, err)
}
