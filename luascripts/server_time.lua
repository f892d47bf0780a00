#!lua flags=no-writes
-- Returns the server's clock in milliseconds since the Unix epoch.
-- Tests and diagnostics compare it with the caller's clock.
local t = redis.call('TIME')
return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
