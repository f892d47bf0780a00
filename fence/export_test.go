package fence

import (
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// Every Store of the tests is batched when REDISTEST_BATCH is set
// (scripts/test.sh's batched pass).
func init() { testBatch = redistest.BatchSize() }

// Scripts returns every script of the package, the frame with an empty
// write included, for the test that loads each into a real server.
func Scripts() []*luascripts.Script {
	return []*luascripts.Script{framed("eval.lua", ""), setScript, hsetScript, getScript, hgetScript, highestScript, aclCheckScript}
}
