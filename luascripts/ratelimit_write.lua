-- Rate-limit decision that consumes: modes 'allow' (all n or nothing) and
-- 'take' (as many of n as are available). The parts that follow are
-- ratelimit_common.lua, the algorithm files the script serves and
-- ratelimit_main.lua, joined by luascripts/ratelimit.go into one script.
local READ_ONLY = false
