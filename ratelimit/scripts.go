package ratelimit

import (
	"strings"

	"github.com/redis-primitives/go/luascripts"
)

// A script pair is one .lua file run two ways: as written, to decide and
// consume, and read-only (EVALSHA_RO, for Peek), which is the same text
// with its first line, a comment, replaced by the no-writes flag. The
// swap keeps every line where it is, so a Lua error's line number is the
// file's. The read-only one is told mode 'peek' and never reaches a write;
// the server would refuse one.
type scriptPair struct {
	write, readOnly *luascripts.Script
}

// noWrites is the first line of every read-only script.
const noWrites = "#!lua flags=no-writes"

// allScripts lists every script of the package, for the test that loads
// each one into a real server.
var allScripts []*luascripts.Script

func newScriptPair(file, src string) scriptPair {
	first, rest, ok := strings.Cut(src, "\n")
	if !ok || !strings.HasPrefix(first, "-- "+file+":") {
		panic("ratelimit: " + file + " must open with a comment line naming it, which the read-only variant replaces")
	}
	p := scriptPair{
		write:    luascripts.New(file, src),
		readOnly: luascripts.NewReadOnly(strings.TrimSuffix(file, ".lua")+"_ro.lua", noWrites+"\n"+rest),
	}
	allScripts = append(allScripts, p.write, p.readOnly)
	return p
}

// pick returns the script for a mode.
func (p scriptPair) pick(m mode) *luascripts.Script {
	if m == modePeek {
		return p.readOnly
	}
	return p.write
}
