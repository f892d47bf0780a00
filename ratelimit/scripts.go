package ratelimit

import (
	_ "embed"
	"strings"

	"github.com/redis-primitives/go/internal/luascripts"
)

// The scripts, which wire.go gives their arguments and reply. Each
// algorithm has a script of its own for a single Limit; a Policy of any
// mix runs policy.lua, whose arithmetic repeats theirs (ADR 0008: one
// script for both cost the server a third more per single-limit call).
// TestPolicyLimitDisagreesWithItsOwnScript holds them to the same
// answers.
var (
	//go:embed log.lua
	logSource string
	//go:embed counter.lua
	counterSource string
	//go:embed gcra.lua
	gcraSource string
	//go:embed policy.lua
	policySource string
	//go:embed reset.lua
	resetSource string

	logScripts     = newScriptPair("log.lua", logSource)
	counterScripts = newScriptPair("counter.lua", counterSource)
	gcraScripts    = newScriptPair("gcra.lua", gcraSource)
	policyScripts  = newScriptPair("policy.lua", policySource)
	resetScript    = newScript(luascripts.New("reset.lua", resetSource))
)

// A script pair is one .lua file run two ways: as written, to decide and
// consume, and read-only (EVALSHA_RO, for Peek), which is the same text
// with its first line, a comment, replaced by the no-writes flag. Both
// get readFunction at the start of their second line. Neither moves a
// line, so a Lua error's line number is the file's. The read-only one is
// told mode 'peek' and never reaches a write; the server would refuse one.
type scriptPair struct {
	write, readOnly *luascripts.Script
}

// noWrites is the first line of every read-only script.
const noWrites = "#!lua flags=no-writes"

// allScripts lists every script of the package, for the test that loads
// each one into a real server.
var allScripts []*luascripts.Script

func newScript(s *luascripts.Script) *luascripts.Script {
	allScripts = append(allScripts, s)
	return s
}

func newScriptPair(file, src string) scriptPair {
	first, rest, ok := strings.Cut(src, "\n")
	if !ok || !strings.HasPrefix(first, "-- "+file+":") {
		panic("ratelimit: " + file + " must open with a comment line naming it, which the read-only variant replaces")
	}
	rest = readFunction + rest
	return scriptPair{
		write:    newScript(luascripts.New(file, first+"\n"+rest)),
		readOnly: newScript(luascripts.NewReadOnly(strings.TrimSuffix(file, ".lua")+"_ro.lua", noWrites+"\n"+rest)),
	}
}

// readFunction defines read(...), with which a decision script makes its
// first read of a key, before it has written anything. In a slot being
// migrated, a key that expired after the server checked the call's keys
// and before the script began is one this node no longer has, and
// redis.call fails ("non local key"). Nothing is written yet, so read
// answers TRYAGAIN instead, as the check would have had the key expired a
// moment sooner, and the client sends the call again. Any other error is
// returned as it is, for the script to reply with. It is one line, put at
// the start of each script's second line, so that the line numbers of a
// Lua error stay the file's.
const readFunction = "local function read(...) local r = redis.pcall(...) if type(r) == 'table' and r.err then " +
	"if string.find(r.err, 'non local key', 1, true) then " +
	"return nil, 'TRYAGAIN a key of the call expired in a slot being migrated' end " +
	"return nil, r.err end return r end "
