package luascripts_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// Redis runs one script at a time and nothing else meanwhile: a slow script
// stalls every client of the server. This is why every script here is kept
// to O(log N) work plus a bounded trim.
func TestAScriptBlocksEveryOtherClientWhileItRuns(t *testing.T) {
	s := redistest.Start(t)
	slow := luascripts.New("busy", `
local t0 = redis.call('TIME')
local start = tonumber(t0[1]) * 1000000 + tonumber(t0[2])
while true do
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000000 + tonumber(t[2]) - start >= tonumber(ARGV[1]) then return 1 end
end`)
	const busy = 300 * time.Millisecond
	runner, other := s.Client(t), s.Client(t)
	ctx := context.Background()
	if err := other.Ping(ctx).Err(); err != nil { // connect before the script starts
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- slow.Run(ctx, goredisadapter.New(runner), nil, busy.Microseconds()).Err }()
	// Nothing outside can see that the script has started (the server answers
	// nobody while it runs), so there is no condition to wait for: the PING
	// goes a sixth of the way into the script's run.
	time.Sleep(busy / 6)
	start := time.Now()
	if err := other.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	waited := time.Since(start)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("a PING sent while a %v script ran waited %v", busy, waited.Round(time.Millisecond))
	// The PING was sent at most busy/6 (plus scheduling) after the script
	// began, so it must have waited for most of the rest.
	if waited < busy/2 {
		t.Fatalf("PING answered after %v while a %v script ran: the script did not block it", waited, busy)
	}
}
