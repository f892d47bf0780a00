package luascripts

import "strings"

// The scripts of package fence. KEYS[1] is always the high-water mark and
// ARGV[1] the token; the keys written share the mark's hash tag.
var (
	// FenceSet refuses a lower token, else records it and SETs KEYS[2] to
	// ARGV[2]. It is fence_eval.lua with that write as its body, so the
	// fence's comparison is written once.
	FenceSet = fenced("fence_set", "redis.call('SET', KEYS[2], ARGV[2])")
	// FenceHSet refuses a lower token, else records it and HSETs field
	// ARGV[2] of KEYS[2] to ARGV[3].
	FenceHSet = fenced("fence_hset", "redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])")
	// FenceGet reads a string key.
	FenceGet = loadReadOnly("fence_get.lua")
	// FenceHGet reads a hash field.
	FenceHGet = loadReadOnly("fence_hget.lua")
	// FenceHighest reads a high-water mark (0 when absent).
	FenceHighest = loadReadOnly("fence_highest.lua")

	// fenceEval is the frame FenceEval puts a caller's write into. Loaded
	// with an empty body, it still compiles, so the syntax test covers it.
	fenceEval = load("fence_eval.lua")
)

// fenceEvalMarker is the line of fence_eval.lua the caller's write replaces.
const fenceEvalMarker = "--[[fence: caller's write]]"

// FenceEval returns the script that runs body, a caller's Lua write, under
// the fence: it runs only when ARGV[1] is at least the mark in KEYS[1], as
// the body of a function whose return value is passed back. The body reads
// its own keys and arguments from KEYS[2..] and ARGV[2..].
func FenceEval(body string) *Script {
	src := strings.Replace(fenceEval.Source(), fenceEvalMarker, body, 1)
	return New("fence_eval.lua+body", src)
}

// fenced registers one of this package's own writes under the fence, so the
// syntax test covers it like the embedded files.
func fenced(name, body string) *Script {
	s := FenceEval(body)
	s.name = name
	registry[name] = s
	return s
}
