package ratelimit

import (
	_ "embed"
	"strings"

	"github.com/redis-primitives/go/internal/luascripts"
)

//go:generate go run ./internal/luagen

// The scripts, which wire.go gives their arguments and reply. Each is
// generated from its source in lua/ (internal/luagen), where each
// algorithm's decision is written once, in lua/lib/, and every script that
// makes it includes that text. Each algorithm has a script of its own for
// a single Limit; a Policy of any mix runs policy.lua, whose arithmetic
// repeats theirs (ADR 0008: one script for both cost the server a third
// more per single-limit call). TestPolicyLimitDisagreesWithItsOwnScript
// holds them to the same answers.
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
// with its first line, a comment, replaced by the no-writes flag, so a Lua
// error's line number is the file's. The read-only one is told mode
// 'peek' and never reaches a write; the server would refuse one.
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
	return scriptPair{
		write:    newScript(luascripts.New(file, first+"\n"+rest)),
		readOnly: newScript(luascripts.NewReadOnly(strings.TrimSuffix(file, ".lua")+"_ro.lua", noWrites+"\n"+rest)),
	}
}
