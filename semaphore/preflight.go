package semaphore

import (
	"context"
	_ "embed"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

//go:embed aclcheck.lua
var aclCheckSource string

var aclCheckScript = luascripts.NewReadOnly("semaphore/aclcheck.lua", aclCheckSource)

// Report is what Preflight found in the server's configuration, as
// lock.Report (a semaphore called "preflight" stands for every name).
type Report = leasecore.Report

// Preflight checks the server as lock's Preflight does (INFO, an ACL check
// by a read-only script, CONFIG GET; nothing is written) and reports in
// Problems a server older than 7.0, any refused command, a
// maxmemory-policy that may evict held permits (any but noeviction: the
// semaphore then admits more than capacity; allkeys-* may evict the token
// counter too), no persistence and RDB snapshots alone. Without the
// counter, tokens still go up as far as the servers' clocks agree (see the
// package doc). It never changes the server; a refused CONFIG GET or check
// script is reported in Problems, not as an error.
func (s *Issuer) Preflight(ctx context.Context) (Report, error) {
	return s.core().Preflight(ctx, func() (leasecore.ACLCheck, bool) {
		keys := s.cfg.keys("preflight")
		return leasecore.ACLCheck{Script: aclCheckScript, Keys: keys[:], Args: []any{s.cfg.Channel("preflight")}}, false
	})
}
