package fence

import (
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// Scripts returns every script of the package, the frame with an empty
// write included, for the test that loads each into a real server.
func Scripts() []*luascripts.Script {
	return []*luascripts.Script{framed("eval.lua", ""), setScript, hsetScript, getScript, hgetScript, highestScript, aclCheckScript}
}

// RecheckPolicyEvery sets how long s trusts the maxmemory-policy it read.
func RecheckPolicyEvery(s *Store, d time.Duration) { s.policy.Recheck = d }
