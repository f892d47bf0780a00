package fence

import "github.com/redis-primitives/go/internal/luascripts"

// Scripts returns every script of the package, the frame with an empty
// write included, for the test that loads each into a real server.
func Scripts() []*luascripts.Script {
	return []*luascripts.Script{framed("eval.lua", ""), setScript, hsetScript, getScript, hgetScript, highestScript, aclCheckScript}
}
