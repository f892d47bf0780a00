package leasecore

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis-primitives/go/internal/luascripts"
)

// Report is what Preflight found in the server's configuration.
type Report struct {
	// Version is the server's redis_version (INFO server).
	Version string
	// Refused lists the commands the primitive needs that the client's ACL
	// user may not run on its keys and channels (a name "preflight" under
	// the prefix stands for every name).
	Refused []string
	// MaxMemoryPolicy is the server's maxmemory-policy.
	MaxMemoryPolicy string
	// AppendOnly reports whether the append-only file is on.
	AppendOnly bool
	// Save is the RDB snapshot schedule ("" when snapshots are off).
	Save string
	// Problems lists, in words, each way found that the server could refuse
	// a call or lose a token counter. Empty means none was found.
	Problems []string
}

// OK reports whether Preflight found no problem.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// ACLCheck is a primitive's read-only script that asks
// redis.acl_check_cmd, for the name "preflight", whether the client's user
// may run every command the primitive needs; it answers the refused ones.
type ACLCheck struct {
	Script *luascripts.Script
	Keys   []string
	Args   []any
}

// preflight reads the server's version (INFO), runs check (nothing is
// written) and reads the configuration (CONFIG GET), and reports in
// Problems a server older than 7.0, any refused command, an evicting
// maxmemory-policy (any but noeviction may evict a held lease when memory
// is full; allkeys-* a counter too), and what could make it lose a token
// counter: no persistence, which loses every counter on a
// restart, or RDB snapshots alone, which lose the increments since the
// last snapshot. What that costs depends on the tokens: counter tokens
// (counterTokens) are then reissued; hybrid tokens rest on the server's
// clock alone, which keeps them increasing as far as the clocks agree.
// A refused CONFIG GET or check script is reported in Problems, not as an
// error.
func preflight(ctx context.Context, c luascripts.Client, errs *Errors, prefix string, check ACLCheck, counterTokens bool) (Report, error) {
	var r Report
	version, scriptsRun, err := luascripts.ServerVersion(ctx, c)
	if err != nil {
		return r, luascripts.CallError(ctx, errs.pkg+": preflight: INFO", err)
	}
	r.Version = version
	if !scriptsRun {
		r.Problems = append(r.Problems, fmt.Sprintf("Redis %s: %v", version, luascripts.ErrRedisTooOld))
		return r, nil
	}
	key := check.Keys[0]
	refused, err := check.Script.Run(ctx, c, check.Keys, check.Args...).StringSlice()
	if cmd, ok := luascripts.RefusedScript(err); ok {
		// The check itself was refused: the user may not run a read-only
		// script, or not on these keys, and so none of the primitive's.
		r.Refused = []string{cmd + " " + key}
		r.Problems = append(r.Problems, fmt.Sprintf("the ACL user may not run %s's scripts on %s: %v", errs.pkg, key, err))
	} else if err != nil {
		return r, luascripts.CallError(ctx, errs.pkg+": preflight: ACL", err)
	} else if r.Refused = refused; len(refused) > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("the ACL user may not run %s on %s*", strings.Join(refused, ", "), prefix))
	}
	r.MaxMemoryPolicy, r.AppendOnly, r.Save, err = luascripts.Durability(ctx, c)
	if _, refused := luascripts.ReplyMessage(err); refused {
		// CONFIG GET refused (an ACL, a managed service): reported, as
		// every primitive's Preflight does.
		r.Problems = append(r.Problems, fmt.Sprintf(
			"%v: check by hand that no allkeys-* maxmemory-policy can evict token counters and that appendonly is on", err))
		return r, nil
	}
	if err != nil {
		return r, luascripts.CallError(ctx, errs.pkg+": preflight: config", err)
	}
	r.Problems = append(r.Problems, durability(r, counterTokens)...)
	return r, nil
}

// durability words the ways r's configuration can lose a token counter,
// and what that costs the tokens.
func durability(r Report, counterTokens bool) []string {
	var problems []string
	// Any policy but noeviction may evict a held lease when memory is full
	// (ADR 0029: 46-50 of 50 held locks taken by a second holder); allkeys-*
	// the counters too.
	switch p := r.MaxMemoryPolicy; {
	case strings.HasPrefix(p, "allkeys-"):
		problems = append(problems, fmt.Sprintf(
			"maxmemory-policy %s may evict token counters, which have no TTL, and held leases, which a second holder may then take while the first still works; use noeviction", p))
	case strings.HasPrefix(p, "volatile-"):
		problems = append(problems, fmt.Sprintf(
			"maxmemory-policy %s may evict held leases, which have a TTL, when memory is full: a second holder may then take a held place while the first still works (tokens still go up, so a fence refuses the older holder); use noeviction", p))
	}
	cost := "tokens then rest on the server's clock alone"
	if counterTokens {
		cost = "tokens already handed out are handed out again"
	}
	switch {
	case !r.AppendOnly && r.Save == "":
		problems = append(problems, "no persistence (appendonly no, save \"\"): a restart loses every token counter, and "+cost)
	case !r.AppendOnly:
		problems = append(problems, fmt.Sprintf(
			"RDB snapshots only (save %q): a restart loses the counters' increments since the last snapshot, and %s; enable appendonly", r.Save, cost))
	}
	return problems
}
