#!lua flags=no-writes
-- Rate-limit decision that consumes nothing and writes nothing (EVALSHA_RO):
-- would n be admitted now? Joined with the same parts as ratelimit_write.lua.
local READ_ONLY = true
