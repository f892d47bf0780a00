-- log.lua: the read-only variant (Peek) is this file with this first line replaced by the no-writes flag.
-- Sliding-window log, one limit: one sorted-set member per admitted request,
-- scored by its time in µs. Exact; rejected requests are never recorded.
-- Decides n requests and, unless the mode is 'peek', consumes them when
-- admitted.
--
-- KEYS[1]  the limit's log. Member names are integers (Redis stores them in
--          8 bytes, not as text): (score mod window) × capacity + c - 1,
--          c running from the number of live members before the call plus
--          one. Live members lie within one window, so no two share a
--          score mod window unless they share the score; at one score the
--          live count only grows from call to call (time on a key never
--          goes back, and nothing at now - window < score is trimmed), so
--          each call's c follow all earlier ones: names are unique. The
--          guard is the newest member's score or, after a rejection at a
--          later time, the time appended to its name ("<name>~<time>").
-- ARGV     every script's (wire.go): n, mode, a pinned time or '', then
--          the limit: 'l', capacity, window in µs and 0.
-- Reply:   every script's (wire.go), for a policy of one: granted, allowed,
--          then allowed, remaining, retry-after µs and reset-after µs.
--
-- The limit's numbers come packed and the reply goes packed: a table reply
-- and text numbers cost the server more (parsing and printing numbers, a
-- Lua table per call) than the struct calls that replace them.
--
-- Flat on purpose: no function is built per call, and a table only for
-- AllowN/Take of more than one request. Times and names (integers below
-- 2^53) go through '%d': tostring prints 14 significant digits, too few
-- for a µs timestamp, and '%.0f' costs the server 5,000 instructions a
-- call where '%d' costs 2,000. A number passed to redis.call is printed
-- by Redis with '%.17g' (2,500 instructions): constants go as strings.
local n, mode = tonumber(ARGV[1]), ARGV[2]
local cap, win = struct.unpack('>I8I8I8', ARGV[4], 2)
--#include lib/clock.lua

local key = KEYS[1]
local newest = redis.pcall('ZRANGE', key, '-1', '-1', 'WITHSCORES') -- in line, not by lib/read.lua's function
if newest.err then
  local r = newest
  --#include lib/readerr.lua
  return redis.error_reply(e)
end
--#include lib/log.lua
