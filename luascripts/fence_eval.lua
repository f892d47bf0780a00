-- The frame of a caller's write run under the fence (fence.Store.Eval).
-- The caller's Lua replaces the marker line below and runs as the body of
-- a function, so it may return a value; it runs only if the token passes.
-- KEYS[1] high-water mark (no TTL)   KEYS[2..] the caller's keys
-- ARGV[1] token                      ARGV[2..] the caller's arguments
-- Returns {1, token, result} when run, {0, highest} when refused.
local token = tonumber(ARGV[1])
local highest = tonumber(redis.call('GET', KEYS[1]) or '0')
if token < highest then
  return {0, highest}
end
if token > highest then
  redis.call('SET', KEYS[1], ARGV[1])
end
local function write()
--[[fence: caller's write]]
end
return {1, token, write()}
