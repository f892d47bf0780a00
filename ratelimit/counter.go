package ratelimit

import _ "embed"

//go:embed counter.lua
var counterSource string

// counterScripts decide on one sliding-counter limit: counter.lua, whose
// arguments and reply are built and read by decideOne (decide.go).
var counterScripts = newScriptPair("counter.lua", counterSource)
