package main

import (
	"context"
	"testing"

	"github.com/redis-primitives/go/internal/redistest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// The three variants under the same burst: only the pinned-connection
// transaction and the Lua script are limiters; the pooled WATCH is not.
func TestPooledWatchIsNoLimiterWhileWatchAndLuaHoldTheLimit(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	const callers, limit = 100, 5
	for _, v := range variants {
		o, err := run(ctx, s.Addr(), s.Prefix(), v, callers, limit)
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		t.Logf("%s: admitted %d/%d, recorded %d, errors %d, retries %d, conns %d, %v",
			v.name, o.admitted, limit, o.recorded, o.errors, o.retries, o.conns, o.elapsed)
		switch v.name[:3] {
		case "(A)":
			// Either callers were admitted past the limit or they got errors
			// instead of a decision: both mean it does not limit.
			if o.admitted <= limit && o.errors == 0 {
				t.Errorf("%s behaved as a limiter: %+v", v.name, o)
			}
		case "(B)", "(C)":
			if o.admitted != limit || o.recorded != limit || o.errors != 0 {
				t.Errorf("%s: admitted %d, recorded %d, errors %d; want exactly %d, %d, 0",
					v.name, o.admitted, o.recorded, o.errors, limit, limit)
			}
		}
		if v.name[:3] == "(C)" && o.retries != 0 {
			t.Errorf("the Lua script retried %d times", o.retries)
		}
	}
}
