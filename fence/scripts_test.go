package fence_test

import (
	"context"
	"testing"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/internal/redistest"
)

// A syntax error in a script would otherwise surface on a caller's first
// write: SCRIPT LOAD compiles each one on a real server.
func TestEveryScriptCompilesOnARealServer(t *testing.T) {
	c := redistest.Start(t).Client(t)
	for _, s := range fence.Scripts() {
		sha, err := c.ScriptLoad(context.Background(), s.Source()).Result()
		if err != nil {
			t.Errorf("%s: %v", s.Name(), err)
			continue
		}
		if sha != s.SHA1() {
			t.Errorf("%s: server digest %s, script says %s", s.Name(), sha, s.SHA1())
		}
	}
}
