-- The frame of every fenced write: the fence's comparison, written once.
-- Set, HSet and Store.Eval put their write in place of the marker line
-- below; it runs as the body of a function, so it may return a value, and
-- only if the token passes.
-- KEYS[1] high-water mark (no TTL)   KEYS[2..] the keys written
-- ARGV[1] token                      ARGV[2..] the write's arguments
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
--[[fence: the write]]
end
return {1, token, write()}
