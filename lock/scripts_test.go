package lock

import (
	"context"
	"strings"
	"testing"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// scripts is every script of this package.
var scripts = []*luascripts.Script{acquireScript, releaseScript, extendScript, holderScript, forceReleaseScript, aclCheckScript}

func TestEveryScriptOfThePackageCompilesOnARealServer(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	for _, sc := range scripts {
		sha, err := c.ScriptLoad(context.Background(), sc.Source()).Result()
		if err != nil {
			t.Errorf("%s: %v", sc.Name(), err)
			continue
		}
		if sha != sc.SHA1() {
			t.Errorf("%s: server digest %s, ours %s", sc.Name(), sha, sc.SHA1())
		}
		if strings.Contains(sc.Source(), "flags=no-writes") != sc.ReadOnly() {
			t.Errorf("%s: no-writes flag and ReadOnly disagree", sc.Name())
		}
	}
}
