-- gcra.lua: the read-only variant (Peek) is this file with this first line replaced by the no-writes flag.
-- GCRA, one limit, kept as the equivalent leaky bucket in exact integers:
-- one request adds unit to the backlog q, which drains drain per µs
-- (unit / drain = period / rate, the emission interval, reduced in Go by
-- their greatest common divisor). Capacity is the burst; Go checks
-- capacity × unit < 2^53, so every value is an exact integer and every
-- wait exact. Decides n requests and, unless the mode is 'peek', consumes
-- them when admitted.
--
-- KEYS[1]  the limit's state: a string packing t (the latest time decided
--          at, the monotonic guard and the stamp of q, 7 bytes) and q
--          (w bytes, as few as q needs).
-- ARGV     every script's (wire.go): n, mode, a pinned time or '', then
--          the limit: 'g', capacity (the burst), unit and drain.
-- Reply:   every script's (wire.go), for a policy of one: granted, allowed,
--          then allowed, remaining, retry-after µs and reset-after µs.
--
-- The limit's numbers come packed and the reply goes packed: a table reply
-- and text numbers cost the server more (parsing and printing numbers, a
-- Lua table per call) than the struct calls that replace them.
--
-- Flat on purpose: no function or table is built per call. Divisions go
-- through floats and are corrected where the quotient rounds across an
-- integer (values stay below 2^53).
local n, mode = tonumber(ARGV[1]), ARGV[2]
local cap, unit, drain = struct.unpack('>I8I8I8', ARGV[4], 2)
--#include lib/clock.lua

local key = KEYS[1]
--#include lib/get.lua
--#include lib/gcra.lua
