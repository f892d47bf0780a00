package semaphore

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// scripts is every script of this package.
var scripts = []*luascripts.Script{acquireScript, releaseScript, extendScript, holdersScript, aclCheckScript}

var keyArg = regexp.MustCompile(`KEYS\[(\d+)\]`)

// Every script compiles on a real server under the digest the runner
// sends, is flagged read-only exactly when it is run read-only, opens with
// its KEYS/ARGV header, and reads the server's clock where it decides by
// time.
func TestEveryScriptOfThePackageCompilesOnARealServerAndStatesItsContract(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	for _, sc := range scripts {
		src := sc.Source()
		sha, err := c.ScriptLoad(context.Background(), src).Result()
		if err != nil {
			t.Errorf("%s: %v", sc.Name(), err)
			continue
		}
		if sha != sc.SHA1() {
			t.Errorf("%s: server digest %s, ours %s", sc.Name(), sha, sc.SHA1())
		}
		if strings.Contains(src, "flags=no-writes") != sc.ReadOnly() {
			t.Errorf("%s: no-writes flag and ReadOnly disagree", sc.Name())
		}
		header := src[:strings.Index(src, "\nlocal ")]
		for _, m := range keyArg.FindAllStringSubmatch(src, -1) {
			if !strings.Contains(header, "KEYS["+m[1]+"]") {
				t.Errorf("%s uses KEYS[%s], which its header does not describe", sc.Name(), m[1])
			}
		}
		if sc != aclCheckScript && !strings.Contains(src, "redis.call('TIME')") {
			t.Errorf("%s decides by time without the server's TIME", sc.Name())
		}
	}
}
