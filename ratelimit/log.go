package ratelimit

import _ "embed"

//go:embed log.lua
var logSource string

// logScripts decide on one sliding-log limit: log.lua, whose
// arguments and reply are built and read by decideOne (decide.go).
var logScripts = newScriptPair("log.lua", logSource)
