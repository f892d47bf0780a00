package luascripts

import "strings"

// The rate-limit scripts are assembled from parts so that each algorithm is
// written once and shared by every script that uses it: the consuming and
// the read-only script, for a single limit of that algorithm and for a
// policy of several. A single-limit script holds only its own algorithm, so
// the server builds no functions the call does not use. Each assembled
// script is still one atomic call. The argument layout is documented at the
// top of ratelimit_common.lua.
var (
	// RatelimitDecide decides and consumes (modes "allow" and "take") for
	// a policy of any limits.
	RatelimitDecide = joinRatelimit("ratelimit_decide", false, "log", "counter", "gcra")
	// RatelimitPeek decides without consuming or writing anything; it
	// carries the no-writes flag and runs with EVALSHA_RO.
	RatelimitPeek = joinRatelimit("ratelimit_peek", true, "log", "counter", "gcra")

	// The same for a single limit of one algorithm.
	RatelimitDecideLog     = joinRatelimit("ratelimit_decide_log", false, "log")
	RatelimitPeekLog       = joinRatelimit("ratelimit_peek_log", true, "log")
	RatelimitDecideCounter = joinRatelimit("ratelimit_decide_counter", false, "counter")
	RatelimitPeekCounter   = joinRatelimit("ratelimit_peek_counter", true, "counter")
	RatelimitDecideGCRA    = joinRatelimit("ratelimit_decide_gcra", false, "gcra")
	RatelimitPeekGCRA      = joinRatelimit("ratelimit_peek_gcra", true, "gcra")
)

// joinRatelimit builds one script from the head (read-only or not), the
// shared part, the named algorithms and the main part, and registers it
// under name so the syntax test in this package loads it.
func joinRatelimit(name string, readOnly bool, algorithms ...string) *Script {
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
