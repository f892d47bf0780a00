package ratelimit

import _ "embed"

//go:embed gcra.lua
var gcraSource string

// gcraScripts decide on one GCRA limit: gcra.lua, whose
// arguments and reply are built and read by decideOne (decide.go).
var gcraScripts = newScriptPair("gcra.lua", gcraSource)
