package ratelimit

import (
	"context"
	"strings"
	"testing"

	"github.com/redis-primitives/go/internal/redistest"
)

// A syntax error in a script would surface only on the first call that
// uses it: SCRIPT LOAD every one into a real server, and check that each
// script run keeps its file's line numbers.
func TestEveryScriptLoadsIntoARealServer(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	if len(allScripts) != 13 {
		t.Fatalf("%d scripts, want 13: a write and a read-only one for log, counter, GCRA and policy, reset, aclcheck, reserve, settle and extend", len(allScripts))
	}
	for _, sc := range allScripts {
		sha, err := c.ScriptLoad(context.Background(), sc.Source()).Result()
		if err != nil {
			t.Errorf("%s: %v", sc.Name(), err)
			continue
		}
		if sha != sc.SHA1() {
			t.Errorf("%s: server digest %s, ours %s", sc.Name(), sha, sc.SHA1())
		}
		if sc.ReadOnly() && !strings.HasPrefix(sc.Source(), noWrites+"\n") {
			t.Errorf("%s: read-only without the no-writes flag", sc.Name())
		}
	}
	for p, file := range map[scriptPair]string{logScripts: logSource, counterScripts: counterSource, gcraScripts: gcraSource, policyScripts: policySource} {
		f, w, r := strings.Count(file, "\n"), strings.Count(p.write.Source(), "\n"), strings.Count(p.readOnly.Source(), "\n")
		if w != f || r != f {
			t.Errorf("%s: %d lines, as run %d, its read-only variant %d: error lines would not match the file", p.write.Name(), f, w, r)
		}
	}
}
