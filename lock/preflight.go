package lock

import (
	"context"
	_ "embed"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

//go:embed aclcheck.lua
var aclCheckSource string

var aclCheckScript = luascripts.NewReadOnly("lock/aclcheck.lua", aclCheckSource)

// Report is what Preflight found in the server's configuration: the
// server's version, the commands lock needs that the client's ACL user may
// not run on this Locker's keys and channels (a name "preflight" under the
// prefix stands for every name), the settings that decide whether a
// fencing counter survives (maxmemory-policy, appendonly, save), and in
// Problems, in words, every way found that the server could refuse a call
// or lose a counter. OK reports whether Problems is empty.
type Report = leasecore.Report

// Preflight reads the server's version (INFO), whether the client's ACL
// user may run every command lock needs (a script asks redis.acl_check_cmd;
// nothing is written), and the configuration (CONFIG GET), and reports in
// Problems a server older than 7.0, any refused command, a
// maxmemory-policy that may evict a held lock when memory is full (any but
// noeviction: the lock has a TTL; allkeys-* may evict the fencing counter
// too, and a Locker WithCounterTokens refuses to acquire there, see
// ErrEvictingPolicy), and what could make it lose a fencing counter: no
// persistence, which loses every counter on a restart, or RDB snapshots alone, which lose the counters' increments
// since the last snapshot. What a lost counter costs depends on the
// tokens, and the report says so: default tokens then rest on the
// server's clock alone (see the package doc for the bound); with
// WithCounterTokens, tokens already handed out are handed out again. It
// only reports; it never changes the server. Call it at start-up and
// refuse to start, or warn, as you see fit.
//
// A server or user that refuses CONFIG GET (some managed services), or
// the check's read-only script, is reported in Problems, not as an error,
// as every primitive's Preflight does: check those settings by hand.
func (l *Locker) Preflight(ctx context.Context) (Report, error) {
	return l.core().Preflight(ctx, func() (leasecore.ACLCheck, bool) {
		key, mode := l.cfg.lockKey("preflight"), "t"
		if l.cfg.counterTokens {
			mode = ""
		}
		return leasecore.ACLCheck{Script: aclCheckScript, Keys: []string{key, counterKey(key)}, Args: []any{l.cfg.Channel("preflight"), mode}}, l.cfg.counterTokens
	})
}
