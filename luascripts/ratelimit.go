package luascripts

import "strings"

// The rate-limit scripts are assembled from parts so that the three
// algorithms are written once and shared by the consuming script and the
// read-only one. Each assembled script is still one atomic call.
var ratelimitParts = []string{
	"ratelimit_common.lua",
	"ratelimit_log.lua",
	"ratelimit_counter.lua",
	"ratelimit_gcra.lua",
	"ratelimit_main.lua",
}

// RatelimitDecide decides and consumes (modes "allow" and "take"). The
// argument layout is documented at the top of ratelimit_common.lua.
var RatelimitDecide = join("ratelimit_decide", false, "ratelimit_write.lua")

// RatelimitPeek decides without consuming or writing anything; it carries
// the no-writes flag and runs with EVALSHA_RO.
var RatelimitPeek = join("ratelimit_peek", true, "ratelimit_peek_head.lua")

// join builds one script from a head file and the shared parts and
// registers it under name, so the syntax test in this package loads it.
func join(name string, readOnly bool, head string) *Script {
	var b strings.Builder
	for _, file := range append([]string{head}, ratelimitParts...) {
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
