-- counter.lua: the read-only variant (Peek) is this file with this first line replaced by the no-writes flag.
-- Sliding-window counter, one limit: decides n requests and, unless the mode
-- is 'peek', consumes them when admitted.
--
-- KEYS[1]  the limit's state: a string packing t, the latest time decided at
--          (the monotonic guard, 7 bytes), then c, the count of t's bucket,
--          and p, the count of the bucket before (w bytes each, w as small
--          as the larger count allows). The bucket index is floor(t / window).
-- ARGV     every script's (wire.go): n, mode, a pinned time or '', then
--          the limit: 'c', capacity, window in µs and 0.
-- Reply:   every script's (wire.go), for a policy of one: granted, allowed,
--          then allowed, remaining, retry-after µs and reset-after µs.
--
-- The limit's numbers come packed and the reply goes packed: a table reply
-- and text numbers cost the server more (parsing and printing numbers, a
-- Lua table per call) than the struct calls that replace them.
--
-- Flat on purpose: no function or table is built per call.
local n, mode = tonumber(ARGV[1]), ARGV[2]
local cap, win = struct.unpack('>I8I8I8', ARGV[4], 2)
--#include lib/clock.lua

local key = KEYS[1]
--#include lib/get.lua
--#include lib/counter.lua
