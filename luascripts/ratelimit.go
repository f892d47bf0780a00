package luascripts

import "strings"

// The rate-limit scripts are assembled from parts so that each algorithm is
// written once and shared by every script that uses it: one script per set
// of algorithms a call uses, consuming or read-only. A script holds only
// the algorithms of its set, so the server builds no functions a call does
// not use (every Lua function is a closure built on every call). Each
// assembled script is still one atomic call. The argument layout is
// documented at the top of ratelimit_common.lua.

// The algorithms, as bits of the set Ratelimit takes.
const (
	RatelimitLog = 1 << iota
	RatelimitCounter
	RatelimitGCRA
)

var ratelimitAlgorithms = []string{"log", "counter", "gcra"}

// ratelimitScripts holds every set's scripts: [readOnly][set].
var ratelimitScripts [2][1 << 3]*Script

func init() {
	for set := 1; set < len(ratelimitScripts[0]); set++ {
		var algs []string
		for i, a := range ratelimitAlgorithms {
			if set&(1<<i) != 0 {
				algs = append(algs, a)
			}
		}
		name := "ratelimit_" + strings.Join(algs, "_")
		ratelimitScripts[0][set] = joinRatelimit(name+"_decide", false, algs)
		ratelimitScripts[1][set] = joinRatelimit(name+"_peek", true, algs)
	}
}

// Ratelimit returns the script for a call whose limits use the algorithms
// in set (RatelimitLog | RatelimitCounter | RatelimitGCRA, at least one).
// The consuming script decides and consumes (modes "allow" and "take"); the
// read-only one decides without consuming or writing anything, carries the
// no-writes flag and runs with EVALSHA_RO.
func Ratelimit(set int, readOnly bool) *Script {
	ro := 0
	if readOnly {
		ro = 1
	}
	return ratelimitScripts[ro][set]
}

// joinRatelimit builds one script from the head (read-only or not), the
// shared part, the named algorithms and the main part, and registers it
// under name so the syntax test in this package loads it.
func joinRatelimit(name string, readOnly bool, algorithms []string) *Script {
	head := "ratelimit_write.lua"
	if readOnly {
		head = "ratelimit_peek_head.lua"
	}
	files := []string{head, "ratelimit_common.lua"}
	for _, a := range algorithms {
		files = append(files, "ratelimit_"+a+".lua")
	}
	files = append(files, "ratelimit_main.lua")
	var b strings.Builder
	for _, file := range files {
		src, err := sources.ReadFile(file)
		if err != nil {
			panic("luascripts: " + err.Error())
		}
		b.Write(src)
		b.WriteByte('\n')
	}
	s := New(name, b.String())
	s.readOnly = readOnly
	registry[name] = s
	return s
}
